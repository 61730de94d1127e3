/**
 * RocketMQ's broker.conf / namesrv.conf files (`-c`): read with Java `Properties.load` semantics
 * (properties-text.ts), `${user.home}` in a value expanded to the user's home directory (a tsmq
 * convenience; RocketMQ's defaults mean the same path), and keys updated in place.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { formatPropertyLine, naturalLines, PropertiesSyntaxError, readPropertiesEntries } from './properties-text.js';

/**
 * Key → value of a properties file (a later duplicate wins), `${user.home}` expanded.
 * @throws the read error, or PropertiesSyntaxError naming the file and line (malformed `\uXXXX`).
 */
export function readPropertiesFile(path: string): Record<string, string> {
  let entries;
  try {
    entries = readPropertiesEntries(readFileSync(path, 'utf8'));
  } catch (e) {
    if (e instanceof PropertiesSyntaxError) throw new PropertiesSyntaxError(`${path}: ${e.message}`);
    throw e;
  }
  const out: Record<string, string> = {};
  for (const e of entries) out[e.key] = e.value.replace(/\$\{user\.home\}/g, homedir());
  return out;
}

/**
 * `text` with the given keys set: the lines of every entry of a given key (all natural lines of
 * a continued entry, and every duplicate, so a later duplicate cannot win over the update) are
 * replaced by one `formatPropertyLine` line; keys not found are appended at the end; comments,
 * blank lines, order and every other line stay as they were (except an entry whose continuation
 * runs into the end of the text, rewritten as one line so an appended key stays a key). Values that need escaping
 * (backslashes, line breaks, non-ASCII...) are escaped, so `Properties.load` reads them back
 * exactly (Apache's properties2String writes them raw).
 * @throws PropertiesSyntaxError when `text` itself is malformed.
 */
export function setPropertiesInText(text: string, updates: ReadonlyMap<string, string>): string {
  const eol = text.includes('\r\n') ? '\r\n' : text.includes('\r') ? '\r' : '\n';
  const lines = naturalLines(text);
  const replaced = new Map<number, string | null>(); // line → new text, null = dropped
  const written = new Set<string>();
  for (const e of readPropertiesEntries(text)) {
    if (!updates.has(e.key)) {
      // The text ends inside this entry's continuation (a final odd backslash, which Java drops):
      // a line appended after it would be read as part of its value, so it is rewritten whole.
      if (e.lastLine === lines.length - 1 && /(^|[^\\])(\\\\)*\\$/.test(lines[e.lastLine]!)) {
        replaced.set(e.firstLine, formatPropertyLine(e.key, e.value));
        for (let i = e.firstLine + 1; i <= e.lastLine; i++) replaced.set(i, null);
      }
      continue;
    }
    written.add(e.key);
    replaced.set(e.firstLine, formatPropertyLine(e.key, updates.get(e.key)!));
    for (let i = e.firstLine + 1; i <= e.lastLine; i++) replaced.set(i, null);
  }
  const out: string[] = [];
  lines.forEach((line, i) => {
    const r = replaced.get(i);
    if (r === undefined) out.push(line);
    else if (r !== null) out.push(r);
  });
  for (const [k, v] of updates) if (!written.has(k)) out.push(formatPropertyLine(k, v));
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
