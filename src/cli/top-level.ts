/**
 * Top-level behaviour of the `tsmq` command line: there is no default command, so `tsmq` alone
 * prints the help (on stdout, exit code 0: main.ts) and an unknown command is an error that
 * lists the commands (exit code 1) instead of being taken as an argument of `start`.
 */
import type { Command } from 'commander';
import { suggestKnownKey } from '../common/config/config-spec.js';

/**
 * `error: unknown command 'strat' (did you mean start?)` plus the list of commands; `group`
 * names a command group (`admin` → "admin commands: …" and `tsmq admin --help`).
 */
export function unknownCommandMessage(name: string, commands: string[], group?: string): string {
  const close = suggestKnownKey(name, commands);
  const hint = close ? ` (did you mean ${close}?)` : '';
  const what = group ? `${group} commands` : 'commands';
  return `error: unknown command '${name}'${hint}\n${what}: ${commands.join(', ')} (tsmq ${group ? `${group} ` : ''}--help describes them)`;
}

export function configureTopLevel(program: Command): void {
  program.addHelpText('after', '\n`tsmq start` runs a nameserver and a broker in one process (what `npm start` runs).');
  program.on('command:*', (operands: string[]) => {
    const names = program.commands.map((c) => c.name());
    process.stderr.write(`${unknownCommandMessage(operands[0] ?? '', names)}\n`);
    process.exit(1);
  });
}
