/**
 * Helpers around the real `rocketmq-client-nodejs` 1.0.8 clients for the gRPC integration tests.
 * The client writes its own log to ~/logs/rocketmq/ whatever logger is passed.
 */
import { createRequire } from 'node:module';
import { Producer, PushConsumer, SimpleConsumer, type MessageView } from 'rocketmq-client-nodejs';
import type { Harness } from './grpc-harness.js';
import { quietClientLogger } from './grpc-harness.js';
import type { SubscriptionGroupConfig } from '../../../src/broker/subscription/subscription-group-manager.js';

type ConsumeResultValue = unknown;

/**
 * Client workaround: every consume service of a PushConsumer creates its own egg-logger file
 * logger (~/logs/rocketmq/rocketmq_client_nodejs.log) whose 1 s flush interval is never cleared,
 * so a process that used a PushConsumer never exits. Unref that interval.
 */
function unrefClientLogTimers(): void {
  const req = createRequire(createRequire(import.meta.url).resolve('rocketmq-client-nodejs/package.json'));
  const FileBufferTransport = req('egg-logger/lib/transports/file_buffer.js') as { prototype: { _createInterval(): NodeJS.Timeout } };
  const original = FileBufferTransport.prototype._createInterval;
  FileBufferTransport.prototype._createInterval = function (this: unknown) {
    const t = original.call(this);
    t.unref();
    return t;
  };
}
unrefClientLogTimers();

export async function startProducer(h: Harness, topics: string[], extra: Record<string, unknown> = {}): Promise<Producer> {
  const p = new Producer({ endpoints: h.endpoints, topics, logger: quietClientLogger, requestTimeout: 3000, ...extra } as never);
  await p.startup();
  return p;
}

export async function startSimpleConsumer(h: Harness, group: string, topic: string, awaitDurationMs = 1000, expression = '*'): Promise<SimpleConsumer> {
  const c = new SimpleConsumer({
    endpoints: h.endpoints,
    consumerGroup: group,
    subscriptions: new Map([[topic, expression]]),
    awaitDuration: awaitDurationMs,
    logger: quietClientLogger,
    requestTimeout: 3000,
  } as never);
  await c.startup();
  return c;
}

export async function startPushConsumer(
  h: Harness,
  group: string,
  topic: string,
  consume: (m: MessageView) => Promise<ConsumeResultValue>,
): Promise<PushConsumer> {
  const c = new PushConsumer({
    endpoints: h.endpoints,
    consumerGroup: group,
    subscriptions: new Map([[topic, '*']]),
    messageListener: { consume },
    logger: quietClientLogger,
    requestTimeout: 3000,
  } as never);
  await c.startup();
  return c;
}

/** Creates/replaces a subscription group with some fields changed (in-process broker). */
export function configureGroup(h: Harness, group: string, fields: Partial<SubscriptionGroupConfig>): void {
  const sgm = h.broker.ctx.subscriptionGroupManager;
  sgm.updateSubscriptionGroupConfig({ ...(sgm.get(group) ?? sgm.defaults(group)), ...fields });
}

/** Receives until `want` messages arrived or the time is up; returns everything received. */
export async function receiveUntil(c: SimpleConsumer, want: number, timeoutMs: number, invisibleMs = 10_000, ack = true): Promise<MessageView[]> {
  const got: MessageView[] = [];
  const deadline = Date.now() + timeoutMs;
  while (got.length < want && Date.now() < deadline) {
    const batch = await c.receive(16, invisibleMs);
    for (const m of batch) {
      got.push(m);
      if (ack) await c.ack(m);
    }
  }
  return got;
}

export async function waitFor(cond: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
