/** `tsmq store …`: offline tools for a stopped store (verify, stat, dump, repair). */
import type { Command } from 'commander';
import { registerStoreDumpCommand } from './store-dump.js';
import { registerStoreRepairCommand } from './store-repair.js';
import { registerStoreStatCommand } from './store-stat.js';
import { registerStoreVerifyCommand } from './store-verify.js';

export function registerStoreCommands(program: Command): void {
  const store = program.command('store').description('offline tools for a stopped store: verify, stat, dump, repair');
  registerStoreVerifyCommand(store);
  registerStoreStatCommand(store);
  registerStoreDumpCommand(store);
  registerStoreRepairCommand(store);
}
