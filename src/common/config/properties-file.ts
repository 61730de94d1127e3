/**
 * Parser for RocketMQ's broker.conf / namesrv.conf (Java properties subset): `key=value` or
 * `key: value` lines, `#` and `!` comments, blank lines ignored, surrounding spaces trimmed.
 * `${user.home}` expands to the user's home directory, as RocketMQ's defaults do.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
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

/**
 * `text` with the given keys set: a `key=value` / `key: value` line of a given key is replaced by
 * `key=value` (every such line, so a later duplicate cannot win over the update), keys not found
 * are appended at the end; comments, blank lines, order and every other line stay as they were.
 * @throws Error when a key or value contains a line break (it would become another line).
 */
export function setPropertiesInText(text: string, updates: ReadonlyMap<string, string>): string {
  for (const [k, v] of updates) {
    if (/[\r\n]/.test(k) || /[\r\n]/.test(v)) throw new Error(`config key ${JSON.stringify(k)}: a key or value with a line break cannot be written to a properties file`);
  }
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text === '' ? [] : text.split(/\r?\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const written = new Set<string>();
  const out = lines.map((rawLine) => {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) return rawLine;
    const m = /^([^=:\s]+)\s*[=:]/.exec(line);
    if (!m || !updates.has(m[1]!)) return rawLine;
    written.add(m[1]!);
    return `${m[1]!}=${updates.get(m[1]!)!}`;
  });
  for (const [k, v] of updates) if (!written.has(k)) out.push(`${k}=${v}`);
  return out.join(eol) + eol;
}

/**
 * Sets keys in a broker.conf-style file in place (setPropertiesInText), written to a temp file
 * beside it and renamed over it, so a crash leaves the old or the new file, never half of one.
 * @throws the read/write error, or setPropertiesInText's.
 */
export function setPropertiesInFile(path: string, updates: ReadonlyMap<string, string>): void {
  const next = setPropertiesInText(readFileSync(path, 'utf8'), updates);
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, next);
  renameSync(tmp, path);
}
