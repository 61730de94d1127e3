/**
 * The one parser and writer of Java `Properties` text in tsmq: broker.conf / namesrv.conf (`-c`),
 * UPDATE_BROKER_CONFIG / UPDATE_NAMESRV_CONFIG / cold-data-flow bodies, GET_*_CONFIG answers and
 * the broker.conf lines UPDATE_BROKER_CONFIG writes back (properties-file.ts).
 *
 * Reading mirrors `java.util.Properties.load` (what Apache's MixAll.string2Properties and
 * BrokerStartup/NamesrvStartup use):
 * - natural lines end at `\n`, `\r` or `\r\n`; leading spaces, tabs and form feeds are dropped;
 *   blank lines and lines whose first other character is `#` or `!` are comments;
 * - a line ending in an odd number of backslashes continues on the next natural line, whose
 *   leading whitespace is dropped (a continued line is never a comment; a blank line ends it;
 *   a trailing backslash at the end of the text is dropped); as in Java, a line that is only a
 *   backslash continues into nothing: the next natural line is read as a new line (comment and
 *   blank rules apply);
 * - the key ends at the first unescaped `=`, `:`, space, tab or form feed; whitespace after it,
 *   then one `=` or `:`, then whitespace are skipped; the rest, trailing whitespace included, is
 *   the value; a line with only a key has the value "";
 * - escapes in keys and values: `\t \n \r \f`, `\uXXXX` (exactly four hex digits, else
 *   PropertiesSyntaxError as Java's "Malformed \uxxxx encoding."), any other `\c` is `c`
 *   (so `\=`, `\:`, `\ `, `\\`, `\#`);
 * - a later duplicate key wins.
 * Difference: the text is taken as already decoded (tsmq reads files and bodies as UTF-8);
 * Java's `load(InputStream)` reads bytes as ISO-8859-1, which turns non-ASCII UTF-8 into
 * mojibake in Apache.
 */

/** Thrown for text Java's Properties.load refuses (a malformed `\uXXXX` escape). */
export class PropertiesSyntaxError extends Error {}

/** One key/value of a Properties text and the natural lines (0-based, inclusive) it spans. */
export interface PropertiesEntry {
  key: string;
  value: string;
  firstLine: number;
  lastLine: number;
}

const isBlank = (c: string): boolean => c === ' ' || c === '\t' || c === '\f';

function stripLeading(s: string): string {
  let i = 0;
  while (i < s.length && isBlank(s[i]!)) i++;
  return s.slice(i);
}

function trailingBackslashes(s: string): number {
  let n = 0;
  while (n < s.length && s[s.length - 1 - n] === '\\') n++;
  return n;
}

/** Natural lines of `text` (terminators `\r\n`, `\r`, `\n`; a final terminator adds no line). */
export function naturalLines(text: string): string[] {
  const lines = text.split(/\r\n|\r|\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Java's loadConvert: resolves escapes of one key or value. */
function unescape(s: string, lineNo: number): string {
  if (!s.includes('\\')) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    i++;
    if (i >= s.length) break; // a lone trailing backslash is dropped
    const e = s[i]!;
    if (e === 'u') {
      const hex = s.slice(i + 1, i + 5);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new PropertiesSyntaxError(`line ${lineNo + 1}: Malformed \\uxxxx encoding.`);
      out += String.fromCharCode(parseInt(hex, 16));
      i += 4;
    } else out += e === 't' ? '\t' : e === 'n' ? '\n' : e === 'r' ? '\r' : e === 'f' ? '\f' : e;
  }
  return out;
}

/** Splits one logical line into its raw (still escaped) key and value, as Java's load0. */
function splitKeyValue(line: string): [string, string] {
  let keyEnd = 0;
  let valueStart = line.length;
  let hasSep = false;
  let escaped = false;
  for (; keyEnd < line.length; keyEnd++) {
    const c = line[keyEnd]!;
    if (!escaped && (c === '=' || c === ':')) {
      valueStart = keyEnd + 1;
      hasSep = true;
      break;
    }
    if (!escaped && isBlank(c)) {
      valueStart = keyEnd + 1;
      break;
    }
    escaped = c === '\\' ? !escaped : false;
  }
  for (; valueStart < line.length; valueStart++) {
    const c = line[valueStart]!;
    if (isBlank(c)) continue;
    if (!hasSep && (c === '=' || c === ':')) {
      hasSep = true;
      continue;
    }
    break;
  }
  return [line.slice(0, keyEnd), line.slice(valueStart)];
}

/**
 * Every key/value of `text` in order (duplicates included), with the natural lines each spans.
 * @throws PropertiesSyntaxError for a malformed `\uXXXX` escape.
 */
export function readPropertiesEntries(text: string): PropertiesEntry[] {
  const lines = naturalLines(text);
  const out: PropertiesEntry[] = [];
  for (let i = 0; i < lines.length; i++) {
    let segment = stripLeading(lines[i]!);
    if (segment === '' || segment[0] === '#' || segment[0] === '!') continue;
    const firstLine = i;
    let logical = '';
    let nothingYet = false;
    for (;;) {
      if (trailingBackslashes(segment) % 2 === 0) {
        logical += segment;
        break;
      }
      logical += segment.slice(0, -1);
      if (i + 1 >= lines.length) {
        // Java's LineReader quirk: a lone `\` line ended by `\r\n` at the end of the text reads
        // as nothing, ended by `\n`, `\r` or nothing as the key "".
        nothingYet = logical === '' && text.endsWith('\r\n');
        break;
      }
      if (logical === '') {
        // Java: nothing read yet, so the next natural line starts a new logical line (it can be
        // a comment or blank), not the continuation of an empty key.
        nothingYet = true;
        break;
      }
      i++;
      segment = stripLeading(lines[i]!);
    }
    if (nothingYet) continue;
    const [rawKey, rawValue] = splitKeyValue(logical);
    out.push({ key: unescape(rawKey, firstLine), value: unescape(rawValue, firstLine), firstLine, lastLine: i });
  }
  return out;
}

/**
 * Java `Properties.load` of `text`: key → value, a later duplicate winning.
 * @throws PropertiesSyntaxError for a malformed `\uXXXX` escape.
 */
export function parsePropertiesText(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of readPropertiesEntries(text)) out.set(e.key, e.value);
  return out;
}

function escapeChars(s: string, isKey: boolean): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const code = c.charCodeAt(0);
    if (c === '\\') out += '\\\\';
    else if (c === '\t') out += '\\t';
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\f') out += '\\f';
    else if (c === ' ' && (isKey || i === 0)) out += '\\ ';
    else if (isKey && (c === '=' || c === ':' || c === '#' || c === '!')) out += `\\${c}`;
    else if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
    else out += c;
  }
  return out;
}

/**
 * One `key=value` line (no line end) that `Properties.load` (Java's and parsePropertiesText)
 * reads back as exactly `key` and `value`. Only what needs it is escaped: backslashes, tabs,
 * line breaks and form feeds; in keys also spaces, `=`, `:`, `#`, `!`; in values a leading space;
 * characters outside printable ASCII as `\uXXXX`, so Java's ISO-8859-1 reading gets them right too.
 * Apache's MixAll.properties2String writes `key=value` unescaped, which reloads a value with a
 * backslash or line break wrongly (a line break even injects another key); tsmq escapes instead.
 */
export function formatPropertyLine(key: string, value: string): string {
  return `${escapeChars(key, true)}=${escapeChars(value, false)}`;
}

/** Properties text of `entries`, one `formatPropertyLine` + "\n" each, in the given order. */
export function formatPropertiesText(entries: Iterable<readonly [string, string]>): string {
  let text = '';
  for (const [k, v] of entries) text += `${formatPropertyLine(k, v)}\n`;
  return text;
}
