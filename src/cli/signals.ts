import { flushLogsSync } from '../common/logging/logger.js';

/**
 * Runs `shutdown` once on SIGINT/SIGTERM, then exits. A second signal exits at once. The log
 * lines of the shutdown are written out before `shutdown complete`, which is the last line.
 */
export function shutdownOnSignals(shutdown: () => Promise<void>, log: (msg: string) => void): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals): void => {
    if (stopping) {
      log(`${signal} again: exiting without waiting`);
      process.exit(130);
    }
    stopping = true;
    log(`${signal} received: shutting down (flush, checkpoint, remove abort file)`);
    shutdown().then(
      () => {
        flushLogsSync();
        log('shutdown complete');
        process.exit(0);
      },
      (err: unknown) => {
        flushLogsSync();
        log(`shutdown failed: ${err instanceof Error ? err.stack : String(err)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
