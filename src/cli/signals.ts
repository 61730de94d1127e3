/**
 * Runs `shutdown` once on SIGINT/SIGTERM, then exits. A second signal exits at once.
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
        log('shutdown complete');
        process.exit(0);
      },
      (err: unknown) => {
        log(`shutdown failed: ${err instanceof Error ? err.stack : String(err)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
