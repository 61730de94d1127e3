/**
 * `tsmq store stat --store <dir>`: sizes, CommitLog range and times, topics, and per queue the
 * min/max offsets and store times of a stopped store (src/store/tools/store-stat.ts); --json for
 * the object. Exit code 0, or 1 when the store is in use or the options are bad.
 */
import type { Command } from 'commander';
import { statStore } from '../../store/tools/store-stat.js';
import { isoTime, runStoreTool, storeToolConfig, storeToolOptions, type StoreToolOptions } from './store-common.js';

const mib = (n: number): string => `${(n / 1048576).toFixed(1)} MiB`;

export function registerStoreStatCommand(store: Command): void {
  storeToolOptions(store.command('stat').description('sizes, topics, queues, min/max offsets and store times of a stopped store')).action((opts: StoreToolOptions) => {
    const config = storeToolConfig(opts);
    const s = runStoreTool(() => statStore(config.storePathRootDir, config));
    if (opts.json) {
      console.log(JSON.stringify(s, null, 2));
      return;
    }
    console.log(`store ${s.root}${s.abortFilePresent ? ' (abort file present: not shut down cleanly)' : ''}`);
    console.log(`size: ${mib(s.sizes.totalBytes)} (commitlog ${mib(s.sizes.commitLogBytes)}, consumequeue ${mib(s.sizes.consumeQueueBytes)}, index ${mib(s.sizes.indexBytes)})`);
    const cl = s.commitLog;
    console.log(`commitlog: ${cl.files} file(s), physical offsets [${cl.minPhysicalOffset}, ${cl.maxPhysicalOffset}), stored ${isoTime(cl.firstStoreTimestampMs)} .. ${isoTime(cl.lastStoreTimestampMs)}`);
    console.log(`topics: ${s.topics}, queues: ${s.queues.length}`);
    if (s.queues.length > 0) {
      const rows = [['#Topic', '#QueueId', '#MinOffset', '#MaxOffset', '#FirstStoreTime', '#LastStoreTime'], ...s.queues.map((q) => [q.topic, String(q.queueId), String(q.minOffset), String(q.maxOffset), isoTime(q.minStoreTimestampMs), isoTime(q.maxStoreTimestampMs)])];
      const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
      for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
    }
    for (const f of s.indexFiles) console.log(`${f.file}: ${Math.max(0, f.indexCount - 1)} entries, ${isoTime(f.beginTimestampMs)} .. ${isoTime(f.endTimestampMs)}, physical offsets ${f.beginPhysicalOffset}..${f.endPhysicalOffset}`);
    const cp = s.checkpoint;
    if (cp) console.log(`checkpoint: physicMsgTimestamp ${isoTime(cp.physicMsgTimestampMs)}, logicsMsgTimestamp ${isoTime(cp.logicsMsgTimestampMs)}, indexMsgTimestamp ${isoTime(cp.indexMsgTimestampMs)}, confirmPhyOffset ${cp.confirmPhyOffset}`);
  });
}
