/** A Logger that keeps every line (level + text) for assertions; children share the lines. */
import type { Logger } from '../../src/common/logging/logger.js';

export interface CapturedLine {
  level: 'info' | 'warn' | 'error' | 'debug';
  text: string;
}

export class CaptureLogger implements Logger {
  constructor(readonly lines: CapturedLine[] = []) {}

  private add(level: CapturedLine['level'], obj: object | string, msg?: string): void {
    this.lines.push({ level, text: typeof obj === 'string' ? obj : `${msg ?? ''} ${JSON.stringify(obj)}` });
  }

  info(obj: object | string, msg?: string): void { this.add('info', obj, msg); }
  warn(obj: object | string, msg?: string): void { this.add('warn', obj, msg); }
  error(obj: object | string, msg?: string): void { this.add('error', obj, msg); }
  debug(obj: object | string, msg?: string): void { this.add('debug', obj, msg); }
  child(): Logger { return this; }

  /** Lines at `level` whose text contains `part`. */
  matching(level: CapturedLine['level'], part: string): string[] {
    return this.lines.filter((l) => l.level === level && l.text.includes(part)).map((l) => l.text);
  }
}
