/**
 * The one module that owns segment file names (RocketMQ `UtilAll.offset2FileName`).
 *
 * A segment file is named after the logical byte offset of its first byte, formatted as a
 * 20-digit zero-padded decimal: 0 → `00000000000000000000`, 6,000,000 → `00000000000006000000`,
 * 1 GiB → `00000000001073741824`. Used by the CommitLog and every ConsumeQueue.
 */

export const FILE_NAME_LENGTH = 20;

/** Offset (non-negative safe integer) → 20-digit name. @throws RangeError on a bad offset. */
export function offsetToFileName(offset: number): string {
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new RangeError(`offsetToFileName: offset must be a non-negative safe integer, got ${offset}`);
  }
  return String(offset).padStart(FILE_NAME_LENGTH, '0');
}

/** True when `name` is a segment file name (exactly 20 decimal digits). */
export function isSegmentFileName(name: string): boolean {
  return name.length === FILE_NAME_LENGTH && /^\d{20}$/.test(name);
}

/** 20-digit name → offset. @throws RangeError if the name is not a segment name. */
export function fileNameToOffset(name: string): number {
  if (!isSegmentFileName(name)) throw new RangeError(`not a segment file name: ${JSON.stringify(name)}`);
  const value = Number(name);
  if (!Number.isSafeInteger(value)) throw new RangeError(`segment file name out of range: ${name}`);
  return value;
}

/**
 * Suffix of the marker that `MappedFile.truncateTo` keeps next to a segment while it shrinks and
 * re-extends it (`00000000000000000000.truncating`): a segment found shorter than the segment
 * size with its marker is an interrupted truncation, not a changed size setting.
 */
export const TRUNCATION_MARKER_SUFFIX = '.truncating';

/** The segment name a truncation marker belongs to, or null when `name` is not a marker. */
export function segmentOfTruncationMarker(name: string): string | null {
  if (!name.endsWith(TRUNCATION_MARKER_SUFFIX)) return null;
  const segment = name.slice(0, -TRUNCATION_MARKER_SUFFIX.length);
  return isSegmentFileName(segment) ? segment : null;
}
