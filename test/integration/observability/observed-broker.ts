/**
 * A `tsmq start` child holding real data made by the real ali-ons client, for the metrics and
 * console tests:
 *   OBS_T   50 messages (keys k0..k49, JSON bodies {"n":i,"note":"observability"}); group
 *           GID_OBS consumed the first 40 (then closed, offsets committed), so its lag is 10.
 *   OBS_DLQ 1 message whose handler in GID_OBS_DLQ always fails (maxReconsumeTimes 1): it ends
 *           in %DLQ%GID_OBS_DLQ.
 *   GID_OBS_LIVE consumes all of OBS_T and stays online, in the producer's client instance, so
 *           the producer and a consumer are both registered.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../../support/tsmq-process.js';
import { createConsumer, newMessage, startProducer, waitUntil, type OnsMessage, type OnsProducer } from '../../support/ali-ons-client.js';

export const TOPIC = 'OBS_T';
export const GROUP = 'GID_OBS';
export const DLQ_TOPIC = 'OBS_DLQ';
export const DLQ_GROUP = 'GID_OBS_DLQ';
/** Consumes everything and stays online. */
export const LIVE_GROUP = 'GID_OBS_LIVE';
export const FIRST = 40;
export const TOTAL = 50;

export function bodyOf(i: number): string {
  return JSON.stringify({ n: i, note: 'observability' });
}

export interface ObservedBroker {
  broker: TsmqProcess;
  producer: OnsProducer;
  /** Queue id and offset of each sent message, by key. */
  sent: Map<string, { queueId: number; queueOffset: number; msgId: string }>;
  close(): Promise<void>;
}

async function sendRange(producer: OnsProducer, from: number, to: number, sent: ObservedBroker['sent']): Promise<void> {
  for (let i = from; i < to; i++) {
    const r = await producer.send(newMessage(TOPIC, 'TagObs', Buffer.from(bodyOf(i)), [`k${i}`]));
    if (r.sendStatus !== 'SEND_OK') throw new Error(`send k${i}: ${r.sendStatus}`);
    sent.set(`k${i}`, { queueId: Number(r.messageQueue.queueId), queueOffset: Number(r.queueOffset), msgId: String(r.msgId) });
  }
}

export async function startObservedBroker(options: Record<string, string> = {}): Promise<ObservedBroker> {
  const storeDir = mkdtempSync(join(tmpdir(), 'tsmq-obs-'));
  const broker = await TsmqProcess.start({
    storeDir,
    options: { messageDelayLevel: Array.from({ length: 18 }, () => '1s').join(' '), flushIntervalCommitLog: '100', flushCommitLogLeastPages: '0', ...options },
  });
  const producer = await startProducer(broker.namesrvAddr, 'PID_OBS');
  const sent: ObservedBroker['sent'] = new Map();
  await sendRange(producer, 0, FIRST, sent);

  const seen = new Set<string>();
  const c = createConsumer(broker.namesrvAddr, GROUP, { instanceName: 'obs' });
  c.subscribe(TOPIC, '*', async (msg: OnsMessage) => {
    seen.add(msg.keys.split(' ')[0]!);
  });
  await c.ready();
  await waitUntil(() => seen.size >= FIRST, 60_000, () => `consumed ${seen.size}/${FIRST}`);
  await c.close(); // persists the group's offsets

  let attempts = 0;
  const d = createConsumer(broker.namesrvAddr, DLQ_GROUP, { instanceName: 'obsdlq', maxReconsumeTimes: 1 });
  d.subscribe(DLQ_TOPIC, '*', async () => {
    attempts++;
    throw new Error('always fails (expected by the test)');
  });
  await d.ready();
  await producer.send(newMessage(DLQ_TOPIC, 'TagDead', Buffer.from('dead letter body'), ['dead1']));
  await waitUntil(() => attempts >= 2, 60_000, () => `DLQ handler attempts ${attempts}`);
  await new Promise((r) => setTimeout(r, 500)); // the second failure's send-back reaches the DLQ
  await d.close();

  await sendRange(producer, FIRST, TOTAL, sent);

  // A live consumer in the producer's client instance (default instanceName): its heartbeats
  // register both groups, so the broker has online clients of each kind.
  const liveSeen = new Set<string>();
  const live = createConsumer(broker.namesrvAddr, LIVE_GROUP);
  live.subscribe(TOPIC, '*', async (msg: OnsMessage) => {
    liveSeen.add(msg.keys.split(' ')[0]!);
  });
  await live.ready();
  await waitUntil(() => liveSeen.size >= TOTAL, 60_000, () => `live group consumed ${liveSeen.size}/${TOTAL}`);
  return {
    broker,
    producer,
    sent,
    async close() {
      await live.close().catch(() => {});
      await producer.close().catch(() => {});
      await broker.stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
