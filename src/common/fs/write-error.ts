/**
 * Human-readable text for a failed file-system write, naming the cause. Used in put remarks and
 * in the store's running-flag reasons, e.g.
 *
 *   ENOSPC / EDQUOT → "disk full: write failed with ENOSPC (<message>)"
 *   anything else   → "write failed: <code> <message>" ("write failed: <message>" without a code)
 *
 * `err` is whatever was thrown (an ErrnoException from the fs port, usually); never throws.
 */
export function describeWriteError(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  if (code === 'ENOSPC' || code === 'EDQUOT') return `disk full: write failed with ${code} (${message})`;
  return `write failed: ${code ? `${code} ` : ''}${message}`;
}
