/**
 * `tsmq store repair --store <dir> [--apply]`: what abnormal recovery would do to a stopped store
 * (src/store/tools/store-repair.ts). Without --apply: the plan, one line per action with file and
 * byte offset, nothing changed. With --apply: done, every cut byte and deleted file kept under
 * `<store>/repair-backup-<time>/` (with manifest.json). Exit code: 0 nothing to do or applied,
 * 2 a dry run found something to do, 1 the store is in use or the options are bad.
 */
import type { Command } from 'commander';
import { applyRepair, planRepair, type RepairAction } from '../../store/tools/store-repair.js';
import { runStoreTool, storeToolConfig, storeToolOptions, type StoreToolOptions } from './store-common.js';

function describe(a: RepairAction): string {
  switch (a.kind) {
    case 'cut':
      return `cut     ${a.file} @ ${a.offset}: zero ${a.lengthBytes} byte(s) (${a.reason})`;
    case 'delete':
      return `delete  ${a.file}: ${a.lengthBytes} byte(s) (${a.reason})`;
    case 'extend':
      return `extend  ${a.file} @ ${a.offset}: ${a.lengthBytes} zero byte(s) (${a.reason})`;
    case 'trim':
      return `trim    ${a.file} @ ${a.offset}: remove the last ${a.lengthBytes} byte(s) (${a.reason})`;
    case 'rebuild':
      return `rebuild ${a.file} @ ${a.offset}: queue ${a.topic}/${a.queueId} entries ${a.fromQueueOffset}..${a.toQueueOffset - 1} from the CommitLog${a.preBlanks > 0 ? ` (after ${a.preBlanks} pre-blank units)` : ''} (${a.reason})`;
    case 'checkpoint':
      return `set     checkpoint @ ${a.offset}: ${a.field} ${a.from} -> ${a.to} (${a.reason})`;
  }
}

export function registerStoreRepairCommand(store: Command): void {
  storeToolOptions(store.command('repair').description('list what abnormal recovery would cut and rebuild in a stopped store; --apply does it, backing up every cut byte'))
    .option('--apply', 'apply the repair (backup under <store>/repair-backup-<time>/)')
    .action((opts: StoreToolOptions & { apply?: boolean }) => {
      const config = storeToolConfig(opts);
      const plan = runStoreTool(() => (opts.apply ? applyRepair(config.storePathRootDir, config) : planRepair(config.storePathRootDir, config)));
      if (opts.json) console.log(JSON.stringify({ applied: opts.apply === true && plan.actions.length > 0, ...plan }, null, 2));
      else {
        for (const a of plan.actions) console.log(describe(a));
        for (const n of plan.notes) console.log(`note: ${n}`);
        if (plan.actions.length === 0) console.log(`nothing to repair: the CommitLog ends at ${plan.commitLogEnd}`);
        else if (opts.apply) console.log(`applied ${plan.actions.length} action(s); the CommitLog ends at ${plan.commitLogEnd}; backup in ${plan.backupDir}`);
        else console.log(`${plan.actions.length} action(s) planned; the CommitLog would end at ${plan.commitLogEnd}. Nothing changed: add --apply to do it`);
      }
      process.exit(plan.actions.length > 0 && !opts.apply ? 2 : 0);
    });
}
