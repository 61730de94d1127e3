/**
 * Child process of the replication benchmark (bench/ha/replication.ts): a SLAVE store on its own
 * event loop (and core), replicating from the master's HA port. One JSON argument:
 *
 *   { "root", "masterAddress", "config" }
 *
 * Prints `READY {json}` once the store is open and replication started; on SIGTERM shuts down
 * cleanly and prints `DONE {maxOffset, dispatchBehindBytes, connects}` before exiting.
 */
import { silentLogger } from '../../src/common/logging/logger.js';
import { DefaultMessageStore } from '../../src/store/default-message-store.js';
import type { StoreConfig } from '../../src/store/store-config.js';

interface Args {
  root: string;
  masterAddress: string;
  config: Partial<StoreConfig>;
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2]!) as Args;
  const store = await DefaultMessageStore.open({ ...args.config, storePathRootDir: args.root, brokerRole: 'SLAVE', haMasterAddress: args.masterAddress }, { logger: silentLogger });
  const ha = await store.startHA({ listenPort: 0, reconnectIntervalMs: 200 });
  process.stdout.write(`READY ${JSON.stringify({ maxOffset: store.getMaxPhyOffset() })}\n`);
  process.once('SIGTERM', () => {
    const s = ha.stats();
    const dispatchBehindBytes = store.dispatchBehindBytes();
    const maxOffset = store.getMaxPhyOffset();
    store.shutdown().then(
      () => {
        process.stdout.write(`DONE ${JSON.stringify({ maxOffset, dispatchBehindBytes, connects: s.role === 'slave' ? s.slave.connects : 0 })}\n`);
        process.exit(0);
      },
      (e: unknown) => {
        process.stderr.write(`shutdown failed: ${String(e)}\n`);
        process.exit(1);
      },
    );
  });
  setInterval(() => undefined, 1 << 30);
}

main().catch((e: unknown) => {
  process.stderr.write(`slave-child: ${String((e as Error)?.stack ?? e)}\n`);
  process.exit(1);
});
