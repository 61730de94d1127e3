/**
 * Thrown by the frame codec for bytes that are not a valid remoting frame (negative or
 * oversized length, header longer than the frame, bad JSON, unknown serialize type...).
 * A transport that sees one closes only the offending connection.
 */
export class FrameError extends Error {
  override readonly name = 'FrameError';
  constructor(message: string) {
    super(message);
  }
}
