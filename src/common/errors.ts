/**
 * Base error for tsmq: a stable machine-readable `code` plus a human message and optional cause.
 */
export class TsmqError extends Error {
  /** Stable identifier, e.g. 'MESSAGE_ILLEGAL', 'RECORD_INVALID'. Never localized or reworded. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.code = code;
    this.name = new.target.name;
  }
}
