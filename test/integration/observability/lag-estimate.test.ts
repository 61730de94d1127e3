/**
 * Consumer lag with estimateAccumulation (Apache 5.3.3 ConsumerLagCalculator.calculateMessageCount):
 * on a real broker (sockets, real store), a group online with a tag subscription has as lag only
 * the messages whose tags it takes; a "*" subscription and the console's plain counts see all.
 * The sampling branch (more than 5,000 matches, or 20,000 entries scanned) is checked against a
 * ConsumeQueue stub: the extrapolation match × (to − from) / scanned.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startMetricsBroker, type MetricsBroker } from '../../support/metrics-broker.js';
import { LeanClient } from '../../support/lean-client.js';
import { sampleSum } from '../../support/prometheus-text.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { consumerLags, estimateMessageCount } from '../../../src/metrics/consumer-lag.js';
import type { ConsumeQueueEntryView, MessageStore } from '../../../src/store/message-store.js';

const TOPIC = 'LagEstT';
const TAGGED = 'GID_LAG_TAGA';
const ALL = 'GID_LAG_ALL';

function heartbeat(clientID: string, group: string, subString: string): Buffer {
  const sub = { topic: TOPIC, subString, classFilterMode: false, tagsSet: [], codeSet: [], subVersion: Date.now(), expressionType: 'TAG' };
  return Buffer.from(JSON.stringify({
    clientID,
    consumerDataSet: [{ groupName: group, consumeType: 'CONSUME_PASSIVELY', messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET', unitMode: false, subscriptionDataSet: [sub] }],
    producerDataSet: [],
  }));
}

describe('consumer lag with estimateAccumulation', { timeout: 60_000 }, () => {
  let mb: MetricsBroker;
  let c: LeanClient;

  before(async () => {
    mb = await startMetricsBroker('tsmq-lag-est-', {});
    c = new LeanClient(mb.addr);
    await c.ready;
  });

  after(async () => {
    c?.close();
    await mb?.stop();
  });

  it("a tag subscription's lag counts the messages of its tags only; '*' and the console count all", async () => {
    // 12 messages on queue 0: tags A, B, C in turn → 4 TagA
    for (let i = 0; i < 12; i++) {
      const r = await c.send(TOPIC, 0, Buffer.from(`m${i}`), { TAGS: ['TagA', 'TagB', 'TagC'][i % 3]!, WAIT: 'true' });
      assert.equal(r.code, 0, r.remark ?? '');
    }
    for (const [id, group, sub] of [['c-a', TAGGED, 'TagA'], ['c-all', ALL, '*']] as const) {
      assert.equal((await c.invoke(RequestCode.HEART_BEAT, {}, heartbeat(`127.0.0.1@${id}`, group, sub))).code, 0);
      // committed at 3: 9 messages behind (offsets 3..11), of which TagA: 3, 6 and 9
      assert.equal((await c.invoke(RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: group, topic: TOPIC, queueId: 0, commitOffset: 3 })).code, 0);
    }
    const text = await mb.scrape();
    const lag = (group: string, name = 'rocketmq_consumer_lag_messages'): number | undefined => sampleSum(text, name, { topic: TOPIC, consumer_group: group });
    assert.equal(lag(TAGGED), 3, 'TagA at offsets 3, 6 and 9');
    assert.equal(lag(ALL), 9);
    assert.equal(lag(TAGGED, 'rocketmq_consumer_ready_messages'), 3);
    assert.equal(lag(ALL, 'rocketmq_consumer_ready_messages'), 9);
    const plain = await consumerLags(mb.broker, Date.now(), false);
    assert.equal(plain.find((l) => l.group === TAGGED && l.topic === TOPIC)?.lagMessages, 9, 'the console counts plain offset differences');
  });
});

describe('estimateMessageCount (ConsumeQueue.estimateMessageCount)', () => {
  /** A queue of `size` entries from `min` on whose tags code is 1 every `every` entries, else 0. */
  const stubStore = (min: number, size: number, every: number): MessageStore =>
    ({
      getMinOffsetInQueue: () => min,
      getConsumeQueueEntries: (_t: string, _q: number, from: number, maxCount: number): ConsumeQueueEntryView[] => {
        const out: ConsumeQueueEntryView[] = [];
        for (let o = Math.max(from, min); o < min + size && out.length < maxCount; o++) out.push({ queueOffset: o, phyOffset: o * 100, sizeBytes: 100, tagsCode: o % every === 0 ? 1 : 0 });
        return out;
      },
    }) as unknown as MessageStore;
  const ones = { isMatchedByConsumeQueue: (code: number) => code === 1 };

  it('counts exactly under the thresholds', () => {
    assert.equal(estimateMessageCount(stubStore(0, 1000, 4), 'T', 0, 0, 1000, ones), 250);
    assert.equal(estimateMessageCount(stubStore(0, 1000, 4), 'T', 0, 10, 10, ones), 0);
  });

  it('extrapolates after 20,000 scanned entries', () => {
    // 100,000 entries, 1 in 10 matches: 2,000 of the first 20,000 → 2,000 × 100,000 / 20,000
    assert.equal(estimateMessageCount(stubStore(0, 100_000, 10), 'T', 0, 0, 100_000, ones), 10_000);
  });

  it('extrapolates after more than 5,000 matches', () => {
    // every entry matches: the scan stops at match 5,001 = scanned 5,001 → 5,001 × 60,000 / 5,001
    assert.equal(estimateMessageCount(stubStore(0, 60_000, 1), 'T', 0, 0, 60_000, ones), 60_000);
  });

  it('a range below the min offset is moved up to it, keeping its length (Apache)', () => {
    // queue from 500: [0, 100) becomes [500, 600); 1 in 4 matches there → 25
    assert.equal(estimateMessageCount(stubStore(500, 1000, 4), 'T', 0, 0, 100, ones), 25);
  });
});
