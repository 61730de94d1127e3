/**
 * Structured logging (pino, JSON lines) with one `component` key per line. Every component takes
 * a `Logger` in its dependencies; tests pass `silentLogger`.
 *
 * Components nest by path: `createLogger('broker').child({ component: 'store' }).child({ component: 'ha' })`
 * logs `"component":"broker.store.ha"` once (pino alone would repeat the key per child level,
 * and JSON parsers keep only the last one). Other bindings of a child replace the parent's
 * value of the same key, never repeat it.
 *
 * Level comes from TSMQ_LOG_LEVEL (trace, debug, info, warn, error, fatal, silent; default
 * "info"; tests default to "silent" when NODE_TEST_CONTEXT is set by node:test).
 */
import { pino, type Logger as PinoLogger } from 'pino';
import pinoPretty from 'pino-pretty';

export interface Logger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

function defaultLevel(): string {
  if (process.env.TSMQ_LOG_LEVEL) return process.env.TSMQ_LOG_LEVEL;
  return process.env.NODE_TEST_CONTEXT ? 'silent' : 'info';
}

/** A pino logger whose children merge their bindings (component paths joined with '.'). */
class ComponentLogger implements Logger {
  private readonly out: PinoLogger;

  constructor(
    private readonly base: PinoLogger,
    private readonly bindings: Record<string, unknown>,
  ) {
    this.out = Object.keys(bindings).length > 0 ? base.child(bindings) : base;
  }

  info(obj: object | string, msg?: string): void {
    if (msg === undefined) this.out.info(obj);
    else this.out.info(obj, msg);
  }

  warn(obj: object | string, msg?: string): void {
    if (msg === undefined) this.out.warn(obj);
    else this.out.warn(obj, msg);
  }

  error(obj: object | string, msg?: string): void {
    if (msg === undefined) this.out.error(obj);
    else this.out.error(obj, msg);
  }

  debug(obj: object | string, msg?: string): void {
    if (msg === undefined) this.out.debug(obj);
    else this.out.debug(obj, msg);
  }

  child(bindings: Record<string, unknown>): Logger {
    const merged = { ...this.bindings, ...bindings };
    const parent = this.bindings.component;
    const own = bindings.component;
    if (parent !== undefined && own !== undefined) merged.component = `${String(parent)}.${String(own)}`;
    return new ComponentLogger(this.base, merged);
  }
}

/** Wraps a pino logger (tests give one writing to a buffer). */
export function wrapPino(base: PinoLogger, bindings: Record<string, unknown> = {}): Logger {
  return new ComponentLogger(base, bindings);
}

/**
 * Human-readable lines (pino-pretty: ISO local times, level, component, message) when stdout is a
 * terminal; JSON lines otherwise. TSMQ_LOG_FORMAT=json|pretty overrides.
 */
function prettyWanted(): boolean {
  const f = process.env.TSMQ_LOG_FORMAT;
  if (f === 'json') return false;
  if (f === 'pretty') return true;
  return process.stdout.isTTY === true;
}

function prettyStream(): { write(chunk: string): unknown; flushSync?(): void } {
  return pinoPretty({
    colorize: process.stdout.isTTY === true,
    translateTime: 'SYS:yyyy-mm-dd"T"HH:MM:ss.lo',
    ignore: 'pid,hostname,component',
    messageFormat: '{if component}[{component}] {end}{msg}',
    sync: true,
  });
}

let root: Logger | null = null;
/** The root logger's stdout stream (pino's default: SonicBoom on fd 1, asynchronous writes). */
let rootStream: { write(chunk: string): unknown; flushSync?(): void } | null = null;

/** The process-wide root logger (JSON lines on stdout). */
export function rootLogger(): Logger {
  if (!root) {
    const stream = prettyWanted() ? prettyStream() : pino.destination({ fd: process.stdout.fd || 1, sync: false });
    rootStream = stream;
    root = wrapPino(pino({ level: defaultLevel(), base: { pid: process.pid } }, stream));
  }
  return root;
}

/**
 * Prints one line on stdout after every log line taken so far. pino writes stdout
 * asynchronously, so a `console.log` right after log calls can reach the terminal before them
 * (the start-up banner used to come out before "gRPC front listening", although gRPC was bound
 * first). Writing through the log stream keeps the order. Falls back to console.log before the
 * root logger exists.
 */
export function printAfterLogs(line: string): void {
  if (rootStream) rootStream.write(`${line}\n`);
  else console.log(line);
}

/**
 * Writes out every log line taken so far (pino's stdout stream is asynchronous), so that what is
 * printed next comes after them, e.g. `shutdown complete` as the very last line. Never throws.
 */
export function flushLogsSync(): void {
  try {
    rootStream?.flushSync?.();
  } catch {
    // a closed or busy stdout: nothing more can be done before exit
  }
}

/** A child logger for one component, e.g. `createLogger('commitlog')`. */
export function createLogger(component: string): Logger {
  return rootLogger().child({ component });
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = wrapPino(pino({ level: 'silent' }));
