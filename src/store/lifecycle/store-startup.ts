/**
 * Start-up after the parts are built (RocketMQ `DefaultMessageStore.load` recovery part +
 * `start`, spec §3.3 steps 4–6):
 *
 * 1. abort file present ⇒ the last exit was abnormal ⇒ abnormal recovery;
 * 2. plugins load their files and say from which CommitLog offset they need records again;
 * 3. recovery (store-recovery.ts) re-dispatches records into ConsumeQueues and plugins and
 *    returns its report; a required dispatcher (ConsumeQueue) failing here makes start-up fail
 *    with DispatchBlockedError rather than open a store with a hole in a queue;
 * 4. plugins learn the recovered CommitLog end (`recovered`, awaited: what they change for it is
 *    durable before any put); dispatch continues from it (controller mode: from the recovered
 *    confirm offset, bounded by it until the replica's role is known, see store-recovery.ts); the lock record says `recovered=true`
 *    (a later start on this boot may then trust the page cache);
 * 5. on a writable role without CommitLog segments the first one is created before puts
 *    (pre-written with warmMapedFileEnable when the disk has room; first-segment.ts); a disk
 *    that cannot hold it fails the start with StoreStartError (a sentence, no file left);
 * 6. the background services start, then the abort file is created.
 */
import { recoverStore, type RecoveryReport } from '../recovery/store-recovery.js';
import { createAbortFile } from '../recovery/store-files.js';
import type { StoreComponents } from './store-components.js';
import { StoreServices } from './store-services.js';
import { prepareFirstSegment } from './first-segment.js';

export interface StartedStore {
  recoveryReport: RecoveryReport;
  services: StoreServices;
}

/** See the file comment. @throws recovery and I/O errors, StoreStartError when the first segment cannot be created (the caller closes the parts). */
export async function recoverAndStart(c: StoreComponents): Promise<StartedStore> {
  const lastExitOK = !c.fs.exists(c.abortPath);
  const pageCacheIntact = !lastExitOK && c.lock.previousHolderSameBoot;
  let rebuildFromPhyOffset: number | null = null;
  for (const p of c.plugins) {
    const from = p.load?.(lastExitOK, { pageCacheIntact }).rebuildFromPhyOffset ?? null;
    if (from !== null) rebuildFromPhyOffset = rebuildFromPhyOffset === null ? from : Math.min(rebuildFromPhyOffset, from);
  }
  const recoveryReport = await recoverStore(lastExitOK ? 'normal' : 'abnormal', {
    commitLog: c.commitLog,
    cqStore: c.consumeQueueStore,
    checkpoint: c.checkpoint,
    queueOffsets: c.queueOffsets,
    dispatch: (req) => c.reput.dispatchOne(req),
    rebuildFromPhyOffset,
    checkCrc: c.config.checkCRCOnRecover,
    // unless the lock proves a reboot, the page cache may hold pages a failed fdatasync left
    // clean but unwritten (a clean shutdown after a sync failure keeps the abort file too)
    pageCacheIntact: !lastExitOK && !c.lock.previousHolderOtherBoot,
    delayLevelTableMs: c.delayLevelTableMs,
    logger: c.logger,
    onProgress: c.onRecoveryProgress,
    controllerMode: c.config.enableControllerMode,
  });
  for (const p of c.plugins) await p.recovered?.(c.commitLog.getMaxOffset());
  c.lock.markRecovered(); // a same-boot crash from now on leaves repaired files (store-files.ts)
  c.logics.latestTimestamp = c.checkpoint.logicsMsgTimestamp;
  if (recoveryReport.confirmOffset === null) {
    c.reput.setReputFromOffset(c.commitLog.getMaxOffset());
  } else {
    // controller mode: dispatch stays at the recovered confirm offset (or the ConsumeQueues' end
    // when they got further before a crash) until this replica's role gives a confirm offset; the
    // checkpoint keeps the live confirm offset from now on (Apache CommitLog.setConfirmOffset)
    const dispatched = Math.min(c.commitLog.getMaxOffset(), Math.max(recoveryReport.confirmOffset, c.consumeQueueStore.getMaxPhyOffsetInConsumeQueue()));
    c.reput.setReputFromOffset(dispatched);
    c.confirm.actAsSlave(dispatched);
    c.checkpoint.setConfirmPhyOffsetSource(() => c.confirm.value());
  }
  if (c.config.brokerRole !== 'SLAVE') await prepareFirstSegment(c);
  const services = StoreServices.start(c);
  createAbortFile(c.fs, c.abortPath);
  return { recoveryReport, services };
}
