/**
 * What the `tsmq store …` commands share: the options naming a store and its file sizes
 * (`--store`, `-c broker.conf`, `-o key=value`), the resolved store config, the refusal of a
 * store a live broker holds (exit 1 with the holder's pid) and a terminal progress line.
 */
import type { Command } from 'commander';
import { StoreLockedError } from '../../store/recovery/store-files.js';
import { resolveStoreConfig, type StoreConfig } from '../../store/store-config.js';
import { StoreInUseError, type VerifyProgress } from '../../store/tools/store-verify.js';
import { collectOption, mergeConfig } from '../config-sources.js';
import { defaultStoreRoot } from './common.js';

export interface StoreToolOptions {
  store?: string;
  config?: string;
  option?: string[];
  json?: boolean;
}

/** Adds --store, -c, -o and --json to a `tsmq store` subcommand. */
export function storeToolOptions(cmd: Command): Command {
  return cmd
    .option('--store <dir>', 'storePathRootDir (default ~/tsmq/store)')
    .option('-c, --config <file>', 'broker.conf giving the file sizes (mappedFileSizeCommitLog, ...)')
    .option('-o, --option <key=value>', 'store config key, repeatable (file sizes, messageDelayLevel)', collectOption)
    .option('--json', 'print JSON');
}

export function storeToolConfig(opts: StoreToolOptions): StoreConfig {
  const raw = mergeConfig({ storePathRootDir: defaultStoreRoot() }, opts.config, { storePathRootDir: opts.store }, opts.option);
  return resolveStoreConfig(raw);
}

/** Runs a tool; a store held by a live broker ends the process with exit code 1 and the reason. */
export function runStoreTool<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof StoreInUseError || e instanceof StoreLockedError) {
      console.error(e.message);
      process.exit(1);
    }
    throw e;
  }
}

/** A progress bar with rate and ETA on stderr when it is a terminal. */
export function terminalProgress(): VerifyProgress | undefined {
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

/** Epoch ms as ISO-8601 UTC, or '-' for 0. */
export function isoTime(ms: number): string {
  return ms > 0 ? new Date(ms).toISOString() : '-';
}
