/**
 * FileSystem port: every disk access of the store goes through this interface so tests can
 * inject faults (slow or failing fdatasync, torn writes, crashes).
 *
 * Blocking vs non-blocking:
 * - Metadata calls and positional I/O (`open`, `pread`, `pwrite`, `ftruncate`, ...) are
 *   synchronous. They touch only the page cache (no forced disk I/O), like RocketMQ's writes
 *   into a MappedByteBuffer, and keep the append path free of promise overhead.
 * - `fdatasync`/`fsync` force data to the device and are ASYNCHRONOUS: they must run off the
 *   event-loop thread (libuv thread pool in the Node implementation). Never add a synchronous
 *   variant.
 *
 * All offsets/lengths are byte counts as JS numbers. Errors are thrown as Node-style errors
 * (with `code`, e.g. 'ENOENT') by the implementation.
 */

/** Open modes: 'r' read-only, 'r+' read/write existing, 'w+' create-or-truncate read/write, 'wx+' create exclusively. */
export type OpenMode = 'r' | 'r+' | 'w+' | 'wx+' | 'a+';

export interface FileStat {
  sizeBytes: number;
  mtimeMs: number;
  isDirectory: boolean;
  isFile: boolean;
}

export interface FileSystem {
  /** Opens a file, returning a file descriptor. @throws ENOENT / EEXIST etc. */
  open(path: string, mode: OpenMode): number;
  close(fd: number): void;
  /** Reads up to `length` bytes at file `position` into `buf[bufOffset..]`; returns bytes read (0 at EOF). */
  pread(fd: number, buf: Buffer, bufOffset: number, length: number, position: number): number;
  /** Writes `buf[bufOffset, bufOffset+length)` at file `position` (page cache); returns bytes written. */
  pwrite(fd: number, buf: Buffer, bufOffset: number, length: number, position: number): number;
  /**
   * Optional: `pwrite` run OFF the event loop (libuv pool), for bulk background writes such as
   * pre-writing the next CommitLog segment with zeros. Resolves with the bytes written (all of
   * them). Implementations without it make callers fall back to `pwrite` in small chunks.
   */
  pwriteAsync?(fd: number, buf: Buffer, bufOffset: number, length: number, position: number): Promise<number>;
  /** Sets the file length; extending fills with zeros (sparse where supported). */
  ftruncate(fd: number, lengthBytes: number): void;
  /** Forces file data (not necessarily metadata) to the device. Runs off the event loop. */
  fdatasync(fd: number): Promise<void>;
  /** Forces file data and metadata to the device. Runs off the event loop. */
  fsync(fd: number): Promise<void>;
  /** Size of an open file. */
  fstatSize(fd: number): number;
  /** Stat of a path, or null if it does not exist. */
  stat(path: string): FileStat | null;
  /** Entry names of a directory (not sorted); [] if the directory does not exist. */
  readdir(dir: string): string[];
  /** mkdir -p. */
  mkdirp(dir: string): void;
  /** Deletes a file; no error if it does not exist. */
  unlink(path: string): void;
  /** Deletes a directory tree; no error if it does not exist. */
  rmrf(path: string): void;
  rename(from: string, to: string): void;
  exists(path: string): boolean;
  /** Whole file content, or null if it does not exist. */
  readFile(path: string): Buffer | null;
  /**
   * Replaces a file's content: write to `<path>.tmp`, fsync it (off the loop), rename over `path`,
   * fsync the directory. Crash-atomic: readers see either the old or the new content.
   */
  writeFileDurable(path: string, data: Buffer): Promise<void>;
  /** Writes a file without forcing it (e.g. the abort marker); creates or truncates. */
  writeFile(path: string, data: Buffer): void;
}
