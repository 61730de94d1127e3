/**
 * Decompression with an output cap, so a small compressed input cannot make us allocate (and
 * spend seconds producing) gigabytes: zlib stops as soon as the output passes `maxOutputBytes`
 * (Node's `maxOutputLength`), so the work and memory are bounded by the cap, not by the input's
 * claim. A 2 MB gzip bomb that inflates to 2 GiB is refused after ~maxOutputBytes of output.
 *
 * Formats: 'gzip' (RFC 1952: gRPC body_encoding GZIP) and 'zlib' (RFC 1950: what Apache
 * RocketMQ's remoting clients store with sysFlag COMPRESSED, java.util.zip.Deflater).
 */
import { gunzipSync, inflateSync } from 'node:zlib';

export type BoundedInflateResult =
  | { ok: true; body: Buffer }
  /** too-large: the output passed maxOutputBytes (inflation stopped there); corrupt: not valid data of the format. */
  | { ok: false; reason: 'too-large' | 'corrupt'; message: string };

/** Inflates `input` unless its output exceeds `maxOutputBytes` (> 0). Never throws for bad input. */
export function inflateBounded(input: Buffer, format: 'gzip' | 'zlib', maxOutputBytes: number): BoundedInflateResult {
  try {
    const opts = { maxOutputLength: Math.max(1, maxOutputBytes) };
    const body = format === 'gzip' ? gunzipSync(input, opts) : inflateSync(input, opts);
    return { ok: true, body };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      return { ok: false, reason: 'too-large', message: `${format} data of ${input.length} bytes inflates to more than ${maxOutputBytes} bytes` };
    }
    return { ok: false, reason: 'corrupt', message: `${format} data of ${input.length} bytes does not inflate: ${(e as Error).message}` };
  }
}
