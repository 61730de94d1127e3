#!/usr/bin/env node
/**
 * tsmq command line: `tsmq start` (nameserver + broker), `tsmq namesrv`, `tsmq broker -c broker.conf`.
 */
import { Command } from 'commander';
import { registerStartCommand } from './commands/start.js';
import { registerNamesrvCommand } from './commands/namesrv.js';
import { registerBrokerCommand } from './commands/broker.js';
import { registerAdminCommands } from './commands/admin-delete-expired.js';
import { registerAdminToolCommands } from './commands/admin-commands.js';
import { registerStoreCommands } from './commands/store-commands.js';
import { configureTopLevel } from './top-level.js';

// `tsmq admin … | head`: a reader that closes the pipe ends the output quietly, as Unix tools do.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

const program = new Command();
program.name('tsmq').description('RocketMQ-compatible message broker').version('0.1.0');
configureTopLevel(program);
registerStartCommand(program);
registerNamesrvCommand(program);
registerBrokerCommand(program);
registerAdminCommands(program);
registerAdminToolCommands(program);
registerStoreCommands(program);

if (process.argv.length <= 2) {
  // `tsmq` alone: the help on stdout and success, as `git` or `npm` alone do.
  program.outputHelp();
  process.exit(0);
}

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
