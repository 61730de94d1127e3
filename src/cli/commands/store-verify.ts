/**
 * `tsmq store verify --store <dir>`: offline check of a stopped store (src/store/tools/store-verify.ts).
 * Prints each problem as `<file> @ <offset>: <what>` (or JSON with --json) and a summary; a
 * progress line with rate and ETA on stderr when it is a terminal. Exit code: 0 clean, 2 problems
 * found, 1 the check could not run (store in use by a live broker, unreadable directory, bad option).
 */
import type { Command } from 'commander';
import { resolveStoreConfig } from '../../store/store-config.js';
import { StoreInUseError, verifyStore, type VerifyProgress } from '../../store/tools/store-verify.js';
import { collectOption, mergeConfig } from '../config-sources.js';
import { defaultStoreRoot } from './common.js';

interface VerifyOptions {
  store?: string;
  config?: string;
  option?: string[];
  json?: boolean;
}

function terminalProgress(): VerifyProgress | undefined {
  if (!process.stderr.isTTY) return undefined;
  const t0 = Date.now();
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (now - last < 200 && done < total) return;
    last = now;
    const s = Math.max(0.001, (now - t0) / 1000);
    const rate = done / s;
    const eta = rate > 0 ? (total - done) / rate : 0;
    const pct = total > 0 ? Math.floor((done * 100) / total) : 100;
    const bar = '#'.repeat(Math.floor(pct / 5)).padEnd(20, '.');
    process.stderr.write(`\r[${bar}] ${pct}% ${(rate / 1048576).toFixed(1)} MiB/s ETA ${eta.toFixed(0)} s `);
    if (done >= total) process.stderr.write('\n');
  };
}

export function registerStoreVerifyCommand(store: Command): void {
  store
    .command('verify')
    .description('check every CommitLog record, ConsumeQueue entry, index file and the checkpoint of a stopped store')
    .option('--store <dir>', 'storePathRootDir (default ~/tsmq/store)')
    .option('-c, --config <file>', 'broker.conf giving the file sizes (mappedFileSizeCommitLog, ...)')
    .option('-o, --option <key=value>', 'store config key, repeatable (file sizes, messageDelayLevel)', collectOption)
    .option('--json', 'print the report as JSON')
    .action((opts: VerifyOptions) => {
      const raw = mergeConfig({ storePathRootDir: defaultStoreRoot() }, opts.config, { storePathRootDir: opts.store }, opts.option);
      const config = resolveStoreConfig(raw);
      let report;
      try {
        report = verifyStore(config.storePathRootDir, config, opts.json ? undefined : terminalProgress());
      } catch (e) {
        if (e instanceof StoreInUseError) {
          console.error(e.message);
          process.exit(1);
        }
        throw e;
      }
      if (opts.json) console.log(JSON.stringify(report, null, 2));
      else {
        for (const p of report.problems) console.log(`${p.file} @ ${p.offset}: ${p.message}`);
        for (const n of report.notes) console.log(`note: ${n}`);
        console.log(
          `${report.problems.length === 0 ? 'OK' : `${report.problems.length} problem(s)`}: ${report.commitLogFiles} CommitLog file(s), ${report.records} record(s) ` +
            `[${report.minPhysicalOffset}, ${report.maxPhysicalOffset}), ${report.consumeQueueEntries} ConsumeQueue entries, ${report.indexFiles} index file(s) with ${report.indexEntries} entries`,
        );
      }
      process.exit(report.problems.length === 0 ? 0 : 2);
    });
}

/** `tsmq store …`: offline tools for a stopped store. */
export function registerStoreCommands(program: Command): void {
  const store = program.command('store').description('offline tools for a stopped store: verify');
  registerStoreVerifyCommand(store);
}
