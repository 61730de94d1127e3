/**
 * Structured logging (pino) with a per-component prefix. Every component takes a `Logger`
 * in its dependencies; tests pass `silentLogger`.
 *
 * Level comes from TSMQ_LOG_LEVEL (default "info"; tests default to "silent" when
 * NODE_TEST_CONTEXT is set by node:test).
 */
import { pino } from 'pino';

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

let root: Logger | null = null;

/** The process-wide root logger (JSON lines on stdout). */
export function rootLogger(): Logger {
  root ??= pino({ level: defaultLevel(), base: { pid: process.pid } }) as unknown as Logger;
  return root;
}

/** A child logger for one component, e.g. `createLogger('commitlog')`. */
export function createLogger(component: string): Logger {
  return rootLogger().child({ component });
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = pino({ level: 'silent' }) as unknown as Logger;
