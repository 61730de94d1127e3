/**
 * Runs `tsmq admin <args>` in this process (the real commander program with every admin
 * command registered), capturing what it prints with console.log as lines. `error`: what the
 * command threw (commander's exitOverride turns an exit into an error), else null.
 */
import { Command } from 'commander';
import { registerAdminCommands } from '../../src/cli/commands/admin-delete-expired.js';
import { registerAdminToolCommands } from '../../src/cli/commands/admin-commands.js';

export async function runAdminCli(args: string[]): Promise<{ out: string[]; error: Error | null }> {
  const program = new Command().exitOverride();
  registerAdminCommands(program);
  registerAdminToolCommands(program);
  const out: string[] = [];
  const log = console.log;
  console.log = (...a: unknown[]) => void out.push(...a.join(' ').split('\n'));
  try {
    await program.parseAsync(['node', 'tsmq', 'admin', ...args]);
    return { out, error: null };
  } catch (e) {
    return { out, error: e as Error };
  } finally {
    console.log = log;
  }
}
