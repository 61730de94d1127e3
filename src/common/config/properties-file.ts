/**
 * Parser for RocketMQ's broker.conf / namesrv.conf (Java properties subset): `key=value` or
 * `key: value` lines, `#` and `!` comments, blank lines ignored, surrounding spaces trimmed.
 * `${user.home}` expands to the user's home directory, as RocketMQ's defaults do.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';

export function parsePropertiesText(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const m = /^([^=:\s]+)\s*[=:]\s*(.*)$/.exec(line);
    if (!m) throw new Error(`malformed config line: ${JSON.stringify(rawLine)}`);
    out[m[1]!] = m[2]!.replace(/\$\{user\.home\}/g, homedir());
  }
  return out;
}

export function readPropertiesFile(path: string): Record<string, string> {
  return parsePropertiesText(readFileSync(path, 'utf8'));
}
