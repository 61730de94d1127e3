/**
 * `tsmq store dump commitlog|consumequeue|index|checkpoint`: raw contents of a stopped store by
 * offset range (src/store/tools/store-dump.ts), one line per record/unit/entry, or JSON lines
 * with --json. Exit code 0, or 1 when the store is in use or the options are bad.
 */
import type { Command } from 'commander';
import { dumpCommitLog, dumpConsumeQueue, dumpIndex } from '../../store/tools/store-dump.js';
import { listIndexFiles } from '../../store/tools/index-check.js';
import { readCheckpoint } from '../../store/tools/store-stat.js';
import { assertStoreStopped } from '../../store/tools/store-verify.js';
import { isoTime, runStoreTool, storeToolConfig, storeToolOptions, type StoreToolOptions } from './store-common.js';

function int(name: string): (v: string) => number {
  return (v) => {
    if (!/^\d+$/.test(v)) throw new Error(`--${name} must be a non-negative integer, got "${v}"`);
    return Number(v);
  };
}

export function registerStoreDumpCommand(store: Command): void {
  const dump = store.command('dump').description('print CommitLog records, ConsumeQueue units, index slots/entries or the checkpoint of a stopped store');
  storeToolOptions(dump.command('commitlog').description('CommitLog records from a physical offset (a record start)'))
    .option('--from <offset>', 'first physical offset (default: the first file)', int('from'))
    .option('--to <offset>', 'stop before this physical offset', int('to'))
    .option('--count <n>', 'at most n records (default 100)', int('count'), 100)
    .action((opts: StoreToolOptions & { from?: number; to?: number; count: number }) => {
      const config = storeToolConfig(opts);
      runStoreTool(() => {
        for (const r of dumpCommitLog(config.storePathRootDir, config, { fromPhysicalOffset: opts.from, toPhysicalOffset: opts.to, count: opts.count })) {
          if (opts.json) console.log(JSON.stringify(r));
          else if (r.kind === 'blank') console.log(`${r.physicalOffset} ${r.file} @ ${r.offset}: blank end-of-file filler, ${r.sizeBytes} bytes`);
          else if (r.kind === 'invalid') console.log(`${r.physicalOffset} ${r.file} @ ${r.offset}: INVALID: ${r.reason}`);
          else {
            const props = Object.entries(r.properties).map(([k, v]) => `${k}=${v}`).join(' ');
            console.log(`${r.physicalOffset} ${r.file} @ ${r.offset}: ${r.storeSizeBytes} B v${r.magicVersion} ${r.topic}/${r.queueId}#${r.queueOffset} msgId=${r.msgId} stored ${isoTime(r.storeTimestampMs)} born ${isoTime(r.bornTimestampMs)} ${r.bornHost} sysFlag=${r.sysFlag} tagsCode=${r.tagsCode} [${props}] body ${r.bodyBytes} B "${r.bodyPreview}"`);
          }
        }
      });
    });
  storeToolOptions(dump.command('consumequeue').description('ConsumeQueue units of one queue by queue offset'))
    .requiredOption('--topic <topic>', 'topic')
    .option('--queue <id>', 'queue id (default 0)', int('queue'), 0)
    .option('--from <queueOffset>', 'first queue offset (default: the first file)', int('from'))
    .option('--count <n>', 'at most n units (default 100)', int('count'), 100)
    .action((opts: StoreToolOptions & { topic: string; queue: number; from?: number; count: number }) => {
      const config = storeToolConfig(opts);
      runStoreTool(() => {
        for (const u of dumpConsumeQueue(config.storePathRootDir, config, { topic: opts.topic, queueId: opts.queue, fromQueueOffset: opts.from, count: opts.count })) {
          if (opts.json) console.log(JSON.stringify(u));
          else console.log(`${u.queueOffset} ${u.file} @ ${u.offset}: ${u.kind === 'data' ? `physical offset ${u.physicalOffset}, ${u.sizeBytes} B, tagsCode ${u.tagsCode}` : u.kind}`);
        }
      });
    });
  storeToolOptions(dump.command('index').description('an index file: header, non-empty hash slots, entries'))
    .option('--file <name>', 'index file name (default: the newest)')
    .option('--from <entry>', 'first entry (default 1)', int('from'))
    .option('--count <n>', 'at most n entries (default 100)', int('count'), 100)
    .option('--slots', 'also list the non-empty hash slots')
    .action((opts: StoreToolOptions & { file?: string; from?: number; count: number; slots?: boolean }) => {
      const config = storeToolConfig(opts);
      runStoreTool(() => {
        const names = listIndexFiles(config.storePathRootDir);
        const name = opts.file ?? names[names.length - 1];
        if (!name || !names.includes(name)) throw new Error(name ? `no index file ${name} (have: ${names.join(', ') || 'none'})` : 'no index files');
        const d = dumpIndex(config.storePathRootDir, config, name, { fromEntry: opts.from, count: opts.count });
        if (!opts.slots) d.slots = [];
        if (opts.json) {
          console.log(JSON.stringify(d));
          return;
        }
        const h = d.header;
        console.log(`${d.file}: begin ${isoTime(h.beginTimestampMs)} end ${isoTime(h.endTimestampMs)} physical offsets ${h.beginPhysicalOffset}..${h.endPhysicalOffset} hashSlotCount ${h.hashSlotCount} indexCount ${h.indexCount}`);
        for (const s of d.slots) console.log(`slot ${s.slot} @ ${s.offset}: entry ${s.entry}`);
        for (const e of d.entries) console.log(`entry ${e.entry} @ ${e.offset}: keyHash ${e.keyHash} physical offset ${e.physicalOffset} +${e.timeDiffSeconds} s previous ${e.previousEntry}`);
      });
    });
  storeToolOptions(dump.command('checkpoint').description('the checkpoint file')).action((opts: StoreToolOptions) => {
    const config = storeToolConfig(opts);
    runStoreTool(() => {
      assertStoreStopped(config.storePathRootDir);
      const cp = readCheckpoint(config.storePathRootDir);
      if (!cp) throw new Error(`no checkpoint in ${config.storePathRootDir}`);
      if (opts.json) console.log(JSON.stringify(cp));
      else for (const [k, v] of Object.entries(cp)) console.log(`${k.replace(/Ms$/, '')} ${v}${k.endsWith('TimestampMs') ? ` (${isoTime(v)})` : ''}`);
    });
  });
}
