/**
 * The TLS hint of a plaintext HA port (`tls.server.mode=disabled`), as the remoting and gRPC ports
 * give one: a peer whose first byte is a TLS handshake record (0x16 — a slave with `tls.enable=true`,
 * or any TLS client) is closed with a rate-limited warning naming the peer and the fix, instead of
 * having its ClientHello read as an 8-byte offset report ("slave reported offset 1585267068834414592
 * beyond the master's max offset"). Apache's HAConnection has no such check: it reads the bytes as an
 * offset and the slave only sees its handshake fail.
 *
 * Warnings go through a RateLimitedLog under TLS_ON_PLAINTEXT_PORT_LOG_KEY (one line per interval,
 * then the count of suppressed ones), so a peer retrying every few seconds cannot fill the log.
 */
import type { Socket } from 'node:net';
import type { Logger } from '../../common/logging/logger.js';
import { DEFAULT_BAD_INPUT_LOG_INTERVAL_MS, RateLimitedLog } from '../../common/logging/rate-limited-log.js';
import { sniffTls, TLS_ON_PLAINTEXT_PORT_LOG_KEY } from '../../common/tls/tls-acceptor.js';

/** The warning for a TLS handshake from `remoteAddress` on the plaintext HA port. */
export function haTlsOnPlaintextPortWarning(remoteAddress: string): string {
  return `TLS handshake from ${remoteAddress} on the plaintext HA port (tls.server.mode=disabled), connection closed: `
    + 'set tls.enable=false on the slave, or tls.server.mode=permissive (TLS and plain on one port) or enforcing on this master';
}

export class HaTlsHint {
  private readonly log: RateLimitedLog;

  /** `intervalMs`: at most one warning per this many ms (default 10000). */
  constructor(logger: Logger, intervalMs: number = DEFAULT_BAD_INPUT_LOG_INTERVAL_MS) {
    this.log = new RateLimitedLog(logger, intervalMs);
  }

  /**
   * Waits for the first bytes of a plaintext HA connection (at most `firstByteTimeoutMs`, then
   * the socket is destroyed): a TLS handshake → warning + destroy; anything else → `onPlain(socket)`
   * with the bytes put back and the socket flowing again. Never throws.
   */
  screen(socket: Socket, firstByteTimeoutMs: number, onPlain: (socket: Socket) => void): void {
    sniffTls(socket, firstByteTimeoutMs, (isTls) => {
      if (!isTls) {
        onPlain(socket);
        socket.resume();
        return;
      }
      this.log.warn(TLS_ON_PLAINTEXT_PORT_LOG_KEY, haTlsOnPlaintextPortWarning(`${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`));
      socket.destroy();
    });
  }
}
