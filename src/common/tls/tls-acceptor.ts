/**
 * Turns an accepted TCP socket into the stream a server reads, according to `tls.server.mode`
 * (tls-server-config.ts):
 *
 *   disabled    the socket itself, at once;
 *   enforcing   a server-side TLS socket over it, at once (a plain peer's first frame fails the
 *               handshake: 'error' then 'close' on the returned socket);
 *   permissive  waits for the first byte: 0x16 (a TLS handshake record, what every TLS client
 *               sends first) gets a TLS socket, anything else the plain socket. The byte is put
 *               back, so no data is lost either way. This is Apache NettyRemotingServer's
 *               HandshakeHandler, on the same port.
 *
 * Used by the remoting servers (broker, nameserver), the HA port and the gRPC front.
 */
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { TlsServerSettings } from './tls-server-config.js';

/** First byte of a TLS record of type handshake (ClientHello). */
export const TLS_HANDSHAKE_RECORD_TYPE = 0x16;

/** Rate-limited log key of tlsOnPlaintextPortWarning lines (rate-limited-log.ts). */
export const TLS_ON_PLAINTEXT_PORT_LOG_KEY = 'tls-on-plaintext-port';

/**
 * The warning for a peer whose first byte is a TLS handshake record on a port served in plain
 * text (tls.server.mode=disabled): names the peer and both fixes. Apache logs nothing useful
 * here (the client sees only NotSslRecordException / a closed connection); tsmq closes the
 * connection and logs this through a RateLimitedLog under TLS_ON_PLAINTEXT_PORT_LOG_KEY.
 */
export function tlsOnPlaintextPortWarning(port: 'gRPC' | 'remoting', remoteAddress: string): string {
  const clientFix = port === 'gRPC'
    ? 'enableSsl(false) on the client (rocketmq-client-java ClientConfiguration.newBuilder().enableSsl(false))'
    : 'TLS off on the client (Java remoting client: ClientConfig.setUseTLS(false), -Dtls.enable=false)';
  return `TLS handshake from ${remoteAddress} on the plaintext ${port} port (tls.server.mode=disabled), connection closed: `
    + `use ${clientFix}, or set tls.server.mode=permissive (TLS and plain on one port) or enforcing on the server`;
}

export interface TlsAcceptOptions {
  /** Close a permissive-mode socket that sends nothing for this long, ms (default 30000; 0 = never). */
  firstByteTimeoutMs?: number;
  /**
   * Close a TLS socket whose handshake has not completed this long after it began, ms (default
   * 30000; 0 = never). Without it a peer sending a partial ClientHello holds the socket.
   */
  handshakeTimeoutMs?: number;
}

/**
 * Calls `onReady(stream, secure)` once with the stream to use (the socket, or a TLS socket over it)
 * and whether it is TLS. When the peer closes or times out before its first byte (permissive mode),
 * the socket is destroyed and `onReady` is never called. Never throws.
 */
export function acceptTls(socket: Socket, settings: TlsServerSettings, onReady: (stream: Socket, secure: boolean) => void, opts: TlsAcceptOptions = {}): void {
  if (settings.mode === 'disabled' || !settings.secureContext) {
    onReady(socket, false);
    return;
  }
  const handshakeTimeoutMs = opts.handshakeTimeoutMs ?? 30_000;
  if (settings.mode === 'enforcing') {
    onReady(wrapServerTls(socket, settings, handshakeTimeoutMs), true);
    return;
  }
  sniffTls(socket, opts.firstByteTimeoutMs ?? 30_000, (isTls) => {
    if (isTls) {
      // TLSSocket feeds the bytes already buffered on `socket` to the handshake first
      onReady(wrapServerTls(socket, settings, handshakeTimeoutMs), true);
    } else {
      onReady(socket, false);
      socket.resume();
    }
  });
}

/**
 * Waits for the first byte of `socket` and calls `onDecided(isTls)` once, with the socket paused
 * and the byte put back (nothing consumed). A socket that ends, fails or sends nothing for
 * `timeoutMs` (0 = no limit) is destroyed and `onDecided` is never called.
 */
export function sniffTls(socket: Socket, timeoutMs: number, onDecided: (isTls: boolean) => void): void {
  const onError = (): void => {
    socket.destroy();
  };
  const onEnd = (): void => cleanup(true);
  const onTimeout = (): void => cleanup(true);
  function cleanup(destroy: boolean): void {
    socket.off('data', onFirst);
    socket.off('error', onError);
    socket.off('end', onEnd);
    socket.off('close', onEnd);
    if (timeoutMs > 0) {
      socket.off('timeout', onTimeout);
      socket.setTimeout(0);
    }
    if (destroy) socket.destroy();
  }
  function onFirst(chunk: Buffer): void {
    socket.pause();
    cleanup(false);
    socket.unshift(chunk);
    onDecided(chunk[0] === TLS_HANDSHAKE_RECORD_TYPE);
  }
  socket.on('data', onFirst);
  socket.on('error', onError);
  socket.on('end', onEnd);
  socket.on('close', onEnd);
  if (timeoutMs > 0) {
    socket.setTimeout(timeoutMs);
    socket.on('timeout', onTimeout);
  }
}

function wrapServerTls(socket: Socket, settings: TlsServerSettings, handshakeTimeoutMs: number): TLSSocket {
  const secure = new TLSSocket(socket, {
    isServer: true,
    secureContext: settings.secureContext!,
    requestCert: settings.clientAuth !== 'none',
    rejectUnauthorized: settings.clientAuth === 'require',
  });
  // the TLS socket does not always take the TCP socket down with it; a reset of the TCP socket must
  // not become an unhandled 'error'
  secure.once('close', () => socket.destroy());
  socket.on('error', (e) => secure.destroy(e));
  if (handshakeTimeoutMs > 0) {
    const timer = setTimeout(() => secure.destroy(new Error(`TLS handshake not complete after ${handshakeTimeoutMs} ms`)), handshakeTimeoutMs);
    timer.unref();
    secure.once('secure', () => clearTimeout(timer));
    secure.once('close', () => clearTimeout(timer));
  }
  return secure;
}
