/**
 * Server-wide budget for bytes held in unfinished inbound frames (bytes received but not yet part
 * of a complete frame), shared by every connection of one RemotingServer.
 *
 * Each connection charges what its decoder holds after a read and releases it when frames
 * complete or the connection closes. A charge that would exceed the budget fails; the connection
 * asking for it is closed (the others keep their frames). Without it, N peers each sending
 * the first 16 MiB - 1 bytes of a maximal frame pin N x 16 MiB.
 *
 * Apache RocketMQ has no such budget (Netty's pooled allocator grows with the partial frames);
 * tsmq adds one so the memory an attacker can pin is bounded by configuration, not by the
 * number of sockets. Units: bytes.
 */
export class PartialFrameBudget {
  private used = 0;

  constructor(
    /** Largest total of unfinished frame bytes over all connections, bytes (> 0). */
    readonly limitBytes: number,
  ) {
    if (!(limitBytes > 0)) throw new RangeError(`partial frame budget must be > 0 bytes: ${limitBytes}`);
  }

  /** Bytes currently charged by all connections. */
  get usedBytes(): number {
    return this.used;
  }

  /** Charges `bytes` (>= 0) when the total stays within the limit; false (nothing charged) otherwise. */
  tryCharge(bytes: number): boolean {
    if (this.used + bytes > this.limitBytes) return false;
    this.used += bytes;
    return true;
  }

  /** Returns `bytes` previously charged. */
  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}
