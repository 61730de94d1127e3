/**
 * `tsmq store verify --store <dir>`: offline check of a stopped store (src/store/tools/store-verify.ts).
 * Prints each problem as `<file> @ <offset>: <what>` (or JSON with --json) and a summary; a
 * progress line with rate and ETA on stderr when it is a terminal. Exit code: 0 clean, 2 problems
 * found, 1 the check could not run (store in use by a live broker, unreadable directory, bad option).
 */
import type { Command } from 'commander';
import { verifyStore } from '../../store/tools/store-verify.js';
import { runStoreTool, storeToolConfig, storeToolOptions, terminalProgress, type StoreToolOptions } from './store-common.js';

export function registerStoreVerifyCommand(store: Command): void {
  storeToolOptions(store.command('verify').description('check every CommitLog record, ConsumeQueue entry, index file and the checkpoint of a stopped store')).action(
    (opts: StoreToolOptions) => {
      const config = storeToolConfig(opts);
      const report = runStoreTool(() => verifyStore(config.storePathRootDir, config, opts.json ? undefined : terminalProgress()));
      if (opts.json) console.log(JSON.stringify(report, null, 2));
      else {
        for (const p of report.problems) console.log(`${p.file} @ ${p.offset}: ${p.message}`);
        for (const n of report.notes) console.log(`note: ${n}`);
        console.log(
          `${report.problems.length === 0 ? 'OK' : `${report.problems.length} problem(s)`}: ${report.commitLogFiles} CommitLog file(s), ${report.records} record(s) ` +
            `[${report.minPhysicalOffset}, ${report.maxPhysicalOffset}), ${report.consumeQueueEntries} ConsumeQueue entries, ${report.indexFiles} index file(s) with ${report.indexEntries} entries`,
        );
        if (report.problems.length > 0) console.log(`"tsmq store repair --store ${config.storePathRootDir}" lists what recovery would cut and rebuild; add --apply to do it`);
      }
      process.exit(report.problems.length === 0 ? 0 : 2);
    },
  );
}
