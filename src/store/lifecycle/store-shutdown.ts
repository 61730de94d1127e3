/**
 * Stopping a store (RocketMQ `DefaultMessageStore.shutdown`, spec §3.3 in reverse).
 *
 * `shutdownStore` (clean): phase "stopping" (puts refused) → checkpoint timer off → replication
 * stopped → retention stopped → final CommitLog flush → dispatch drained up to the dispatch limit
 * (store-components.ts `dispatchLimit`: flushed/written offset, controller mode's confirm offset)
 * (then its retry timer stopped) → final ConsumeQueue flush → plugins flushed and shut down
 * (failures logged, never thrown) → checkpoint confirmPhyOffset := CommitLog flushed offset
 * (controller mode: the confirm offset, store-checkpoint.ts `setConfirmPhyOffsetSource`) and
 * forced → files closed → the abort file is removed only when dispatch is caught up and no
 * running flag refuses writes (otherwise the next open takes the abnormal recovery path, which
 * re-dispatches) → lock released → phase "stopped". Second call: no-op.
 *
 * `closeStoreAbruptly` (crash simulation for tests, and the failed-open path): timers stop,
 * every fd is closed, nothing is flushed, the checkpoint is not written and the abort file stays.
 * `commitPending` true hands buffered bytes to the OS first (a process crash after the page cache
 * got them); false loses them.
 */
import type { StoreComponents } from './store-components.js';
import type { StoreServices } from './store-services.js';

/** What shutdown needs of the replication role. */
export interface StoppableReplication {
  shutdown(): Promise<void>;
}

export async function shutdownStore(c: StoreComponents, services: StoreServices, replication: StoppableReplication | null): Promise<void> {
  const { state, commitLog, reput, logger, checkpoint } = c;
  if (state.phase !== 'running') return;
  state.phase = 'stopping';
  services.stopCheckpointTimer();
  await replication?.shutdown().catch((e) => logger.error({ err: e }, 'HA shutdown failed'));
  await services.stopBeforeDrain();
  reput.driveToLimit();
  reput.stop();
  await services.stopAfterDrain();
  for (const p of c.plugins) {
    try {
      await p.flush?.();
      await p.shutdown?.();
    } catch (e) {
      logger.error({ err: e, plugin: p.name }, 'store plugin shutdown failed');
    }
  }
  checkpoint.confirmPhyOffset = commitLog.mfq.getFlushedWhere();
  await checkpoint.flush();
  // controller mode: records past the confirm offset stay undispatched, and the next start's
  // recovery leaves them so (the checkpoint holds the confirm offset), so they do not need the abort file
  const behindBytes = (): number => reput.behindBytes(c.confirm.bound(commitLog.getMaxOffset()));
  const caughtUp = behindBytes() === 0 && state.notWritableReason === null;
  commitLog.mfq.shutdown();
  c.consumeQueueStore.shutdown();
  await checkpoint.close();
  if (caughtUp) c.fs.unlink(c.abortPath);
  else logger.warn({ behindBytes: behindBytes() }, 'dispatch not caught up or store not writable at shutdown; keeping the abort file');
  c.lock.release();
  state.phase = 'stopped';
}

export function closeStoreAbruptly(c: StoreComponents, services: StoreServices | null, replication: StoppableReplication | null, commitPending: boolean): void {
  c.state.phase = 'stopped';
  services?.stopCheckpointTimer();
  void replication?.shutdown().catch(() => undefined); // sockets are destroyed synchronously
  services?.stopAbruptly();
  c.reput.stop();
  c.reput.clearPending();
  c.commitLog.mfq.shutdownAbruptly(commitPending);
  c.consumeQueueStore.shutdownAbruptly(commitPending);
  for (const p of c.plugins) p.closeAbruptly?.();
  c.checkpoint.closeAbruptly();
  c.lock.release();
}
