/**
 * `freePort()`: a TCP port that was free a moment ago on 127.0.0.1 (listen on port 0, read the
 * port, close). The one copy for tests and benchmarks: it imports nothing from src/ or bench/,
 * so test/support and bench/lib may both import it without any layering concern. Racy by
 * nature (another process may take the port before the caller binds it); callers that can
 * listen on port 0 themselves should do that instead.
 */
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
