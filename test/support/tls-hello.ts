/**
 * A Node TLS client that tries a handshake against a port and reports how it ended: the local
 * port it used (servers name the peer as 127.0.0.1:<localPort>) and the error it got, if any.
 */
import * as tls from 'node:tls';

export interface TlsAttempt {
  localPort: number;
  secureConnected: boolean;
  error: Error | null;
}

/** Connects with TLS to 127.0.0.1:`port` and resolves once the connection is closed (fails after `timeoutMs`). */
export function tryTlsHandshake(port: number, timeoutMs = 3000): Promise<TlsAttempt> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['h2'] });
    let localPort = 0;
    let error: Error | null = null;
    let secureConnected = false;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`TLS attempt on port ${port} still open after ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('connect', () => (localPort = socket.localPort ?? 0));
    socket.once('secureConnect', () => (secureConnected = true));
    socket.on('error', (e) => (error ??= e));
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ localPort, secureConnected, error });
    });
  });
}
