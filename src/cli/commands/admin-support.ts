/**
 * What the `tsmq admin …` commands share: the `admin` command group, one remoting request to a
 * broker or nameserver, a reader for the broker's fastjson bodies, and plain-text tables in the
 * style of Apache's mqadmin (`#Header` columns, left-aligned, two spaces apart).
 */
import type { Command } from 'commander';
import { responseCodeName } from '../../remoting/codes/response-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { createRequestCommand } from '../../remoting/protocol/commands.js';
import type { ExtFieldValue, RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { RemotingClient, parseAddress } from '../../remoting/transport/remoting-client.js';
import { RemotingConnectError } from '../../remoting/transport/remoting-errors.js';
import { unknownCommandMessage } from '../top-level.js';
import { adminClientOptions, setAdminConnection, withConnectionOptions, type AdminConnectionOptions } from './admin-connection.js';

export const DEFAULT_ADMIN_TIMEOUT_MS = 10_000;

/**
 * The `admin` command group of `program`, created when missing. `tsmq admin <unknown>` is an
 * error (exit 1) listing the admin commands, as `tsmq <unknown>` lists the commands.
 */
export function adminCommand(program: Command): Command {
  const existing = program.commands.find((c) => c.name() === 'admin');
  if (existing) return existing;
  const admin = program.command('admin').description('administration requests to a running broker or nameserver');
  admin.hook('preAction', (_admin, action) => setAdminConnection(action.opts<AdminConnectionOptions>()));
  admin.on('command:*', (operands: string[]) => {
    const names = admin.commands.map((c) => c.name());
    process.stderr.write(`${unknownCommandMessage(operands[0] ?? '', names, 'admin')}\n`);
    process.exit(1);
  });
  return admin;
}

/** `-n, --namesrv-addr`, defaulting to $NAMESRV_ADDR as mqadmin does. */
export function withNamesrvOption(cmd: Command): Command {
  const fromEnv = process.env.NAMESRV_ADDR;
  return fromEnv
    ? cmd.option('-n, --namesrv-addr <host:port>', 'nameserver address(es), host:port;host:port', fromEnv)
    : cmd.requiredOption('-n, --namesrv-addr <host:port>', 'nameserver address(es), host:port;host:port (or set NAMESRV_ADDR)');
}

/** Options every admin command takes. */
export interface CommonAdminOptions {
  timeout: string;
  json?: boolean;
}

/** Adds `--timeout <ms>`, `--json` and the connection options (admin-connection.ts) to `cmd`. */
export function withCommonOptions(cmd: Command): Command {
  return withConnectionOptions(cmd.option('--timeout <ms>', 'request timeout in ms', String(DEFAULT_ADMIN_TIMEOUT_MS)).option('--json', 'print JSON instead of a table'));
}

/** `--timeout` as a positive number of ms. @throws Error for anything else. */
export function timeoutOf(opts: CommonAdminOptions): number {
  const ms = Number(opts.timeout);
  if (!Number.isFinite(ms) || ms <= 0) throw new Error(`--timeout must be a positive number of ms, got ${opts.timeout}`);
  return ms;
}

/** A non-negative integer option. @throws Error naming the option. */
export function intOption(name: string, text: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(text);
  if (!/^\s*-?\d+\s*$/.test(text) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new Error(`${name} must be an integer in [${min}, ${max === Number.MAX_SAFE_INTEGER ? '…' : max}], got ${text}`);
  }
  return n;
}

/** Splits `host:port;host:port` and checks each address. @throws Error for an empty or malformed list. */
export function addressList(text: string, what: string): string[] {
  const list = text.split(';').map((s) => s.trim()).filter((s) => s.length > 0);
  if (list.length === 0) throw new Error(`${what} address is empty`);
  for (const a of list) {
    try {
      parseAddress(a);
    } catch {
      throw new Error(`${what} address "${a}" is not host:port`);
    }
  }
  return list;
}

/**
 * Sends request `code` with `extFields` (and `body`) to the first address of `addrs` that answers (the next one
 * only after a connect failure) and returns the response whatever its code.
 * @throws RemotingConnectError when none could be reached; timeouts and other errors as they come.
 */
export async function invokeAdmin(
  addrs: string[],
  code: number,
  extFields: Record<string, ExtFieldValue> | null,
  timeoutMs: number,
  body: Buffer | null = null,
): Promise<{ addr: string; response: RemotingCommand }> {
  const client = new RemotingClient(adminClientOptions({ connectTimeoutMs: Math.min(3000, timeoutMs) }));
  try {
    let lastError: unknown = null;
    for (const addr of addrs) {
      try {
        return { addr, response: await client.invokeSync(addr, createRequestCommand(code, extFields, body), timeoutMs) };
      } catch (e) {
        if (!(e instanceof RemotingConnectError)) throw e;
        lastError = e;
      }
    }
    throw lastError instanceof Error ? lastError : new Error('no address to send to');
  } finally {
    await client.close();
  }
}

/** The response body when the code is SUCCESS. @throws Error `<addr> refused: code N (NAME), remark`. */
export function successBody(addr: string, response: RemotingCommand): Buffer {
  if (response.code !== ResponseCode.SUCCESS) {
    throw new Error(`${addr} refused: code ${response.code} (${responseCodeName(response.code)})${response.remark ? `, ${response.remark}` : ''}`);
  }
  return response.body ?? Buffer.alloc(0);
}

/**
 * Parses a fastjson body, which may hold JSON objects or bare numbers in key position (maps keyed
 * by MessageQueue, `{0:12}`). Such keys become their canonical JSON text (`JSON.stringify` of the
 * parsed key), so `JSON.parse(key)` gives the key back; string keys stay as they are.
 * @throws SyntaxError with the position of the first unexpected character.
 */
export function parseFastjson(text: string): unknown {
  let i = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at position ${i} of the body`);
  };
  const ws = (): void => {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++;
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') return object();
    if (c === '[') return array();
    if (c === '"') return string();
    const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!m) return fail('unexpected character');
    i += m[0].length;
    return JSON.parse(m[0]) as unknown;
  };
  const string = (): string => {
    const start = i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) return fail('unterminated string');
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const array = (): unknown[] => {
    const out: unknown[] = [];
    i++;
    ws();
    if (text[i] === ']') {
      i++;
      return out;
    }
    for (;;) {
      out.push(value());
      ws();
      if (text[i] === ',') i++;
      else if (text[i] === ']') {
        i++;
        return out;
      } else return fail('expected , or ]');
    }
  };
  const object = (): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    i++;
    ws();
    if (text[i] === '}') {
      i++;
      return out;
    }
    for (;;) {
      const k = value();
      const key = typeof k === 'string' ? k : JSON.stringify(k);
      ws();
      if (text[i] !== ':') return fail('expected :');
      i++;
      out[key] = value();
      ws();
      if (text[i] === ',') i++;
      else if (text[i] === '}') {
        i++;
        return out;
      } else return fail('expected , or }');
    }
  };
  const result = value();
  ws();
  if (i < text.length) fail('unexpected text after the value');
  return result;
}

/** The object at `field` of a parsed body. @throws Error when it is missing or not an object. */
export function objectField(body: unknown, field: string): Record<string, unknown> {
  const v = body && typeof body === 'object' ? (body as Record<string, unknown>)[field] : undefined;
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`the reply body has no ${field} object`);
  return v as Record<string, unknown>;
}

/** A MessageQueue as an admin table row key. */
export interface QueueRef {
  topic: string;
  brokerName: string;
  queueId: number;
}

/** Entries of a fastjson `Map<MessageQueue, V>` (parsed with parseFastjson), ordered by topic, broker, queue id. */
export function messageQueueEntries(map: Record<string, unknown>): Array<[QueueRef, Record<string, unknown>]> {
  const out: Array<[QueueRef, Record<string, unknown>]> = [];
  for (const [key, value] of Object.entries(map)) {
    let mq: unknown;
    try {
      mq = JSON.parse(key);
    } catch {
      throw new Error(`map key ${key} is not a MessageQueue`);
    }
    const o = mq as Record<string, unknown>;
    if (!o || typeof o.topic !== 'string' || typeof o.brokerName !== 'string' || typeof o.queueId !== 'number') throw new Error(`map key ${key} is not a MessageQueue`);
    if (!value || typeof value !== 'object') throw new Error(`map value of ${key} is not an object`);
    out.push([{ topic: o.topic, brokerName: o.brokerName, queueId: o.queueId }, value as Record<string, unknown>]);
  }
  return out.sort(([a], [b]) => (a.topic !== b.topic ? (a.topic < b.topic ? -1 : 1) : a.brokerName !== b.brokerName ? (a.brokerName < b.brokerName ? -1 : 1) : a.queueId - b.queueId));
}

/** A numeric field (Java long or double) of a parsed body value (missing → 0). @throws Error for a non-number. */
export function numberField(o: Record<string, unknown>, field: string): number {
  const v = o[field];
  if (v === undefined || v === null) return 0;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new Error(`${field} is not a number: ${String(v)}`);
  return n;
}

/**
 * Lines of a table: every column left-aligned and padded to its widest cell, two spaces between
 * columns, trailing spaces trimmed.
 */
export function renderTable(headers: readonly string[], rows: ReadonlyArray<readonly (string | number)[]>): string[] {
  const cells = [headers.map(String), ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, c) => Math.max(...cells.map((r) => (r[c] ?? '').length)));
  return cells.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ').trimEnd());
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** Local time `YYYY-MM-DD HH:mm:ss,SSS` (mqadmin's topicStatus "#Last Updated"); '' for 0. */
export function formatTimeMillis(ms: number): string {
  if (!(ms > 0)) return '';
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())},${pad(d.getMilliseconds(), 3)}`;
}

/** Local time `YYYY-MM-DD HH:mm:ss` (mqadmin's consumerProgress "#LastTime"); 'N/A' for 0. */
export function formatTimeSeconds(ms: number): string {
  if (!(ms > 0)) return 'N/A';
  return formatTimeMillis(ms).slice(0, 19);
}

/** Prints `value` as indented JSON. */
export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

/**
 * A time option as mqadmin takes it: `now`, epoch ms, or local `yyyy-MM-dd#HH:mm:ss:SSS`
 * (UtilAll.YYYY_MM_DD_HH_MM_SS_SSS). @throws Error naming the option and the accepted forms.
 */
export function timestampOption(flag: string, text: string, nowMs = Date.now()): number {
  const t = text.trim();
  if (t === 'now') return nowMs;
  if (/^\d+$/.test(t) && Number.isSafeInteger(Number(t))) return Number(t);
  const m = /^(\d{4})-(\d\d)-(\d\d)#(\d\d):(\d\d):(\d\d):(\d{3})$/.exec(t);
  if (m) {
    const [y, mo, d, h, mi, s, ms] = m.slice(1).map(Number) as [number, number, number, number, number, number, number];
    const date = new Date(y, mo - 1, d, h, mi, s, ms);
    if (date.getFullYear() === y && date.getMonth() === mo - 1 && date.getDate() === d && h < 24 && mi < 60 && s < 60) return date.getTime();
  }
  throw new Error(`${flag} must be now, epoch ms or yyyy-MM-dd#HH:mm:ss:SSS (local time), got ${text}`);
}
