/**
 * The single send's put without a promise per step (SendMessageProcessor → BrokerContext
 * .putMessageWithCallback → DefaultMessageStore.putMessageWithCallback), with the real store:
 * - the stored properties are byte for byte what encoding the decoded Map plus CLUSTER gives,
 *   whatever form the client's text has; for the Java client's form (no last separator) and the
 *   canonical form the record encoder is handed the client's very text plus a CLUSTER tail;
 * - the put hooks that change properties (delay level, DLQ routing) are not bypassed by it;
 * - every outcome answers: a refusal (store shut down) with its code and remark, an internal error
 *   thrown during the put or told later through `fail` with SYSTEM_ERROR and its message (through
 *   the ProcessorTable, as on the wire); stats count stored and refused puts.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerHarness } from './support/broker-harness.js';
import { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import type { PutMessageCallback, PutMessageFailure, PutMessageResult } from '../../../src/store/message-store.js';
import type { MessageInner } from '../../../src/common/message/message.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { ProcessorTable } from '../../../src/remoting/transport/processor-table.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { decodeProperties, encodeProperties } from '../../../src/common/message/properties.js';

let h: BrokerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface Seen {
  encodedProperties: string | undefined;
  encodedPropertiesTail: string | undefined;
  result?: PutMessageResult;
}

/** A harness on a real store whose putMessageWithCallback is watched (what the processor handed over, what came back). */
async function harness(): Promise<{ h: BrokerHarness; store: DefaultMessageStore; dir: string; seen: Seen[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'tsmq-single-cb-'));
  const clock = new ManualClock(1_700_000_000_000);
  const store = await DefaultMessageStore.open({ storePathRootDir: dir, mappedFileSizeCommitLog: 4 * 1024 * 1024, mappedFileSizeConsumeQueue: 2000 }, { clock, logger: silentLogger });
  const seen: Seen[] = [];
  const real = store.putMessageWithCallback.bind(store);
  store.putMessageWithCallback = (msg: MessageInner, done: PutMessageCallback, fail?: PutMessageFailure): void => {
    const s: Seen = { encodedProperties: msg.encodedProperties, encodedPropertiesTail: msg.encodedPropertiesTail };
    seen.push(s);
    real(msg, (r, m) => {
      s.result = r;
      done(r, m);
    }, fail);
  };
  h = await BrokerHarness.create({ store, clock, dir });
  return { h, store, dir, seen };
}

/** The stored record at the put's offset, read from the CommitLog file. */
function storedRecord(dir: string, r: PutMessageResult): Buffer {
  const a = r.appendResult!;
  const fd = openSync(join(dir, 'commitlog', '00000000000000000000'), 'r');
  try {
    const buf = Buffer.alloc(a.wroteBytes);
    readSync(fd, buf, 0, a.wroteBytes, a.wroteOffset);
    return buf;
  } finally {
    closeSync(fd);
  }
}

/** SEND_MESSAGE_V2 with the properties text exactly as given (header i). */
function sendRaw(hh: BrokerHarness, topic: string, propertiesText: string, extra: Record<string, string | number> = {}): Promise<RemotingCommand> {
  return hh.call(RequestCode.SEND_MESSAGE_V2, { a: 'PID_CB', b: topic, c: 'TBW102', d: 4, e: 0, f: 0, g: 1_700_000_000_000, h: 0, i: propertiesText, j: 0, k: false, ...extra }, Buffer.from('body'));
}

/** The record's properties must end it: [len: int16][text]. */
function assertStoredProperties(record: Buffer, expectedText: string): void {
  const bytes = Buffer.from(expectedText, 'utf8');
  assert.equal(record.readInt16BE(record.length - bytes.length - 2), bytes.length, 'properties length');
  assert.equal(record.subarray(record.length - bytes.length).toString('utf8'), expectedText);
}

describe('single send, put through callbacks (real store)', () => {
  it('stored properties = encode(decoded Map + CLUSTER) for every text form; the Java and canonical forms hand over the client text plus a CLUSTER tail', async () => {
    const { h: hh, dir, seen } = await harness();
    const cluster = hh.ctx.config.brokerClusterName;
    const cases: Array<{ name: string; text: string; reused: boolean }> = [
      { name: 'Java client form (no last separator)', text: 'UNIQ_KEY\x017F0000010000ABCDEF\x02WAIT\x01true\x02TAGS\x01TagA', reused: true },
      { name: 'canonical', text: 'KEYS\x01k1 k2\x02TAGS\x01TagB\x02', reused: true },
      { name: 'empty', text: '', reused: true },
      { name: 'non-ASCII value', text: 'KEYS\x01ключ 鍵\x02TAGS\x01T\x02', reused: true },
      { name: 'value with \\x01 inside', text: 'a\x01b\x01c\x02', reused: true },
      { name: 'duplicate key', text: 'KEYS\x01first\x02KEYS\x01second\x02', reused: false },
      { name: 'malformed piece', text: 'x\x02TAGS\x01T\x02', reused: false },
      { name: 'CLUSTER sent by the client', text: 'CLUSTER\x01theirs\x02TAGS\x01T', reused: false },
    ];
    await sendRaw(hh, 'TopicProps', 'TAGS\x01W'); // creates the topic: a send waiting for its config write takes the promise path
    for (const c of cases) {
      const before = seen.length;
      const res = await sendRaw(hh, 'TopicProps', c.text);
      assert.equal(res.code, ResponseCode.SUCCESS, c.name);
      const s = seen[before]!;
      const expected = decodeProperties(c.text);
      expected.set('CLUSTER', cluster);
      const expectedText = encodeProperties(expected);
      const record = storedRecord(dir, s.result!);
      assertStoredProperties(record, expectedText);
      assert.deepEqual([...decodeRecord(record, 0).properties], [...expected], c.name);
      if (c.reused) {
        assert.equal(s.encodedProperties, c.text, `${c.name}: the client's text is stored as is`);
        assert.equal(s.encodedProperties! + s.encodedPropertiesTail!, expectedText, c.name);
      } else {
        assert.equal(s.encodedProperties, expectedText, `${c.name}: the Map encoded again`);
      }
    }
  });

  it('a delay-level send and a DLQ-routed retry send store the properties their rewrites give', async () => {
    const { h: hh, dir, seen } = await harness();
    const cluster = hh.ctx.config.brokerClusterName;
    await sendRaw(hh, 'TopicDelay', 'TAGS\x01W'); // creates the topics first (see above)
    await sendRaw(hh, '%RETRY%GroupCb', 'TAGS\x01W', { j: 5, l: 2 }); // and %DLQ%GroupCb
    const puts = seen.length;
    const delayed = await sendRaw(hh, 'TopicDelay', 'DELAY\x012\x02TAGS\x01T');
    assert.equal(delayed.code, ResponseCode.SUCCESS);
    const d = decodeRecord(storedRecord(dir, seen.at(-1)!.result!), 0);
    assert.equal(d.topic, 'SCHEDULE_TOPIC_XXXX');
    assert.deepEqual([...d.properties], [['DELAY', '2'], ['TAGS', 'T'], ['CLUSTER', cluster], ['REAL_TOPIC', 'TopicDelay'], ['REAL_QID', '0']]);
    assertStoredProperties(storedRecord(dir, seen.at(-1)!.result!), encodeProperties(d.properties));

    const dlq = await sendRaw(hh, '%RETRY%GroupCb', 'DELAY\x013\x02TAGS\x01T', { j: 5, l: 2 });
    assert.equal(dlq.code, ResponseCode.SUCCESS);
    const q = decodeRecord(storedRecord(dir, seen.at(-1)!.result!), 0);
    assert.equal(q.topic, '%DLQ%GroupCb');
    assert.deepEqual([...q.properties], [['TAGS', 'T'], ['CLUSTER', cluster]], 'DELAY dropped, CLUSTER added');
    assertStoredProperties(storedRecord(dir, seen.at(-1)!.result!), encodeProperties(q.properties));
    assert.equal(seen.length, puts + 2, 'both went through putMessageWithCallback');
  });

  it('through the dispatch a send returns null and answers through the responder; called without one it returns a promise of the same answer', async () => {
    const { h: hh } = await harness();
    await hh.send('TopicResp', 'creates the topic');
    const handler = hh.broker.handlerFor(RequestCode.SEND_MESSAGE_V2)!;
    const ext = { a: 'PID_CB', b: 'TopicResp', c: 'TBW102', d: 4, e: 0, f: 0, g: 1, h: 0, i: 'UNIQ_KEY\x01R1\x02TAGS\x01T', j: 0, k: false };
    let answer: RemotingCommand | null = null;
    const answered = new Promise<void>((resolve) => {
      const out = handler({ channel: hh.channel, request: createRequestCommand(RequestCode.SEND_MESSAGE_V2, ext, Buffer.from('x')), respond: { answer: (r) => { answer = r; resolve(); }, fail: (e) => assert.fail(String(e)) } });
      assert.equal(out, null, 'no promise, no answer returned');
    });
    await answered;
    assert.equal(answer!.code, ResponseCode.SUCCESS);
    assert.equal(answer!.extFields?.transactionId, 'R1');
    const viaPromise = handler({ channel: hh.channel, request: createRequestCommand(RequestCode.SEND_MESSAGE_V2, { ...ext, i: 'UNIQ_KEY\x01R2' }, Buffer.from('y')) });
    assert.ok(viaPromise instanceof Promise);
    const r = await viaPromise;
    assert.equal(r!.code, ResponseCode.SUCCESS);
    assert.equal(r!.extFields?.transactionId, 'R2');
    assert.equal(Number(r!.extFields?.queueOffset), Number(answer!.extFields?.queueOffset) + 1);
  });

  it('every outcome answers: stored (stats), refused after shutdown (code and remark, counted as failed), an internal error thrown or told later → SYSTEM_ERROR', async () => {
    const { h: hh, store } = await harness();
    const table = new ProcessorTable(silentLogger);
    table.register(RequestCode.SEND_MESSAGE_V2, hh.broker.handlerFor(RequestCode.SEND_MESSAGE_V2)!);
    const sent: RemotingCommand[] = [];
    let answered: (() => void) | null = null;
    const ch = { id: 'cb', remoteAddress: '127.0.0.1:5555', closed: false, send: (c: RemotingCommand) => { sent.push(c); answered?.(); }, close() {}, onClose() {} };
    /** Dispatches like the transport (the send answers through the dispatch's responder) and waits for the answer. */
    const dispatch = (req: RemotingCommand): Promise<void> => new Promise<void>((resolve) => {
      answered = resolve;
      void table.dispatch(ch, req);
    });
    const request = (n: number) => createRequestCommand(RequestCode.SEND_MESSAGE_V2, { a: 'PID_CB', b: 'TopicOutcome', c: 'TBW102', d: 4, e: 0, f: 0, g: 1, h: 0, i: `UNIQ_KEY\x01ID${n}\x02TAGS\x01T`, j: 0, k: false }, Buffer.from(`m${n}`));

    const stats = hh.ctx.brokerStats;
    await hh.send('TopicOutcome', 'creates the topic');
    await dispatch(request(1));
    await dispatch(request(2));
    assert.deepEqual(sent.map((c) => [c.code, c.extFields?.queueOffset, c.extFields?.transactionId]), [[0, 1, 'ID1'], [0, 2, 'ID2']]);
    assert.equal(stats.getStatsItem('TOPIC_PUT_NUMS', 'TopicOutcome')?.value, 3);

    const real = store.putMessageWithCallback.bind(store);
    store.putMessageWithCallback = () => {
      throw new Error('thrown inside the put');
    };
    await dispatch(request(3));
    store.putMessageWithCallback = (msg, _done, fail) => queueMicrotask(() => fail!(new Error('told after the put'), msg));
    await dispatch(request(4));
    assert.deepEqual(sent.slice(2).map((c) => [c.code, c.remark]), [[ResponseCode.SYSTEM_ERROR, 'thrown inside the put'], [ResponseCode.SYSTEM_ERROR, 'told after the put']]);

    store.putMessageWithCallback = real;
    const failedBefore = stats.totals.putMessageFailedTimes;
    await store.shutdown();
    await dispatch(request(5));
    const refused = sent.at(-1)!;
    assert.equal(refused.code, ResponseCode.SERVICE_NOT_AVAILABLE);
    assert.equal(refused.remark, 'message store has been shut down');
    assert.equal(refused.extFields?.msgId, undefined, 'no msgId for a refused put');
    assert.equal((stats.totals.putMessageFailedTimes) - failedBefore, 1, 'counted as a failed put');
  });
});
