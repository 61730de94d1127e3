/**
 * Thin helpers around the real `ali-ons` client (unmodified, from npm) for integration tests.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// ali-ons is CommonJS without types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const ons = require('ali-ons') as any;

export interface OnsMessage {
  topic: string;
  tags: string;
  /** KEYS property as sent: keys joined by a space. */
  keys: string;
  body: Buffer;
  msgId: string;
  queueId: number;
  queueOffset: number;
  reconsumeTimes: number;
  properties: Record<string, string>;
  storeTimestamp: number;
  commitLogOffset: number;
}

export const quietLogger = {
  info(): void {},
  debug(): void {},
  warn(): void {},
  error(): void {},
};

export function newMessage(topic: string, tags: string | null, body: Buffer, keys?: string[]): unknown {
  const m = new ons.Message(topic, tags, body);
  if (keys) m.keys = keys;
  return m;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type OnsProducer = any;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type OnsConsumer = any;

export async function startProducer(nameSrv: string, producerGroup: string, extra: Record<string, unknown> = {}): Promise<OnsProducer> {
  const p = new ons.Producer({ httpclient: {}, nameSrv, producerGroup, logger: quietLogger, ...extra });
  await p.ready();
  return p;
}

export function createConsumer(nameSrv: string, consumerGroup: string, extra: Record<string, unknown> = {}): OnsConsumer {
  const c = new ons.Consumer({
    httpclient: {},
    nameSrv,
    consumerGroup,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    logger: quietLogger,
    ...extra,
  });
  c.on('error', () => {});
  return c;
}

export const ACTION_RETRY: symbol = ons.Consumer.ACTION_RETRY;

/** Polls `cond` every 50 ms until true or the timeout; throws with `describe()` on timeout. */
export async function waitUntil(cond: () => boolean, timeoutMs: number, describe: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${describe()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
