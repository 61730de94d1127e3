/**
 * The static-topic request rewriting (static-topic-handlers.ts) around stand-in handlers: what
 * the ordinary handler is asked (physical queue and offsets) and what the client is answered
 * (logic queue and offsets), for a queue remapped from broker a (gen 0, logic 0..8) to broker b
 * (gen 1, logic 10000.. at physical 0), seen from broker b.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../../../src/common/time/clock.js';
import { createRequestCommand, createResponseCommand } from '../../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../../src/remoting/codes/response-code.js';
import type { RemotingChannel, RequestHandler } from '../../../../src/remoting/processor/request-processor.js';
import type { ExtFieldValue, RemotingCommand } from '../../../../src/remoting/protocol/remoting-command.js';
import { TopicQueueMappingManager } from '../../../../src/broker/static-topic/topic-queue-mapping-manager.js';
import { wrapStaticTopicHandlers } from '../../../../src/broker/static-topic/static-topic-handlers.js';

const channel: RemotingChannel = { remoteAddress: '127.0.0.1:1', id: 'c1', closed: false, send: () => undefined, close: () => undefined, onClose: () => undefined };
const it0 = { timeOfStart: -1, timeOfEnd: -1 };

async function setup(forward?: (bname: string, r: RemotingCommand) => Promise<RemotingCommand>) {
  const dir = mkdtempSync(join(tmpdir(), 'tsmq-static-h-'));
  const mappings = new TopicQueueMappingManager(join(dir, 'm.json'), { clock: new ManualClock(1), brokerName: 'b' });
  await mappings.update({
    topic: 'T', scope: '__global__', totalQueues: 2, bname: 'b', epoch: 2, dirty: false,
    hostedQueues: new Map([
      [1, [{ gen: 0, queueId: 3, bname: 'a', logicOffset: 0, startOffset: 0, endOffset: 8, ...it0 }, { gen: 1, queueId: 0, bname: 'b', logicOffset: 10_000, startOffset: 0, endOffset: -1, ...it0 }]],
      [0, [{ gen: 0, queueId: 2, bname: 'a', logicOffset: 0, startOffset: 0, endOffset: -1, ...it0 }]],
    ]),
  }, false);
  const seen: Array<Record<string, ExtFieldValue>> = [];
  const answer = (ext: Record<string, ExtFieldValue>): RequestHandler => ({ request }) => {
    seen.push({ ...request.extFields });
    return createResponseCommand(request, ResponseCode.SUCCESS, null, ext);
  };
  const handlers = new Map<number, RequestHandler>([
    [RequestCode.SEND_MESSAGE_V2, answer({ msgId: 'X', queueId: 0, queueOffset: 5 })],
    [RequestCode.PULL_MESSAGE, answer({ nextBeginOffset: 4, minOffset: 0, maxOffset: 6, suggestWhichBrokerId: 0 })],
    [RequestCode.UPDATE_CONSUMER_OFFSET, answer({})],
    [RequestCode.QUERY_CONSUMER_OFFSET, ({ request }) => {
      seen.push({ ...request.extFields });
      return createResponseCommand(request, ResponseCode.QUERY_NOT_FOUND, 'Not found');
    }],
    [RequestCode.GET_MAX_OFFSET, answer({ offset: 6 })],
  ]);
  wrapStaticTopicHandlers(handlers, { mappings, ...(forward ? { forward } : {}) });
  const call = async (code: number, ext: Record<string, ExtFieldValue>): Promise<RemotingCommand> =>
    (await handlers.get(code)!({ channel, request: createRequestCommand(code, ext) }))!;
  return { call, seen, close: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('send wrapper without static topics', () => {
  it('hands back the inner handler\'s own result (no extra promise) when no static topic is hosted, and rewrites once one is', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-static-h-'));
    try {
      const mappings = new TopicQueueMappingManager(join(dir, 'm.json'), { clock: new ManualClock(1), brokerName: 'b' });
      const answers: Array<Promise<RemotingCommand>> = [];
      const inner: RequestHandler = ({ request }) => {
        const p = Promise.resolve(createResponseCommand(request, ResponseCode.SUCCESS, null, { msgId: 'X', queueId: request.extFields!.e!, queueOffset: 5 }));
        answers.push(p);
        return p;
      };
      const handlers = new Map<number, RequestHandler>([[RequestCode.SEND_MESSAGE_V2, inner]]);
      wrapStaticTopicHandlers(handlers, { mappings });
      const send = handlers.get(RequestCode.SEND_MESSAGE_V2)!;
      assert.notEqual(send, inner, 'wrapped');
      const plain = send({ channel, request: createRequestCommand(RequestCode.SEND_MESSAGE_V2, { a: 'PG', b: 'T', e: 1 }) });
      assert.equal(plain, answers[0], 'the inner promise itself');
      await mappings.update({
        topic: 'T', scope: '__global__', totalQueues: 2, bname: 'b', epoch: 2, dirty: false,
        hostedQueues: new Map([[1, [{ gen: 1, queueId: 0, bname: 'b', logicOffset: 10_000, startOffset: 0, endOffset: -1, ...it0 }]]]),
      }, false);
      const other = send({ channel, request: createRequestCommand(RequestCode.SEND_MESSAGE_V2, { a: 'PG', b: 'Other', e: 1 }) });
      assert.equal(other, answers[1], 'a topic that is not static: still the inner promise');
      const rewritten = (await send({ channel, request: createRequestCommand(RequestCode.SEND_MESSAGE_V2, { a: 'PG', b: 'T', e: 1 }) }))!;
      assert.notEqual(rewritten, await answers[2]);
      assert.deepEqual([rewritten.extFields!.queueId, rewritten.extFields!.queueOffset], [1, 10_005]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('static topic request rewriting', () => {
  it('send: logic queue → the leader physical queue; the reply in logic terms; another topic untouched', async () => {
    const s = await setup();
    try {
      const r = await s.call(RequestCode.SEND_MESSAGE_V2, { a: 'PG', b: 'T', e: 1 });
      assert.equal(s.seen[0]!.e, 0);
      assert.deepEqual([r.extFields!.queueId, r.extFields!.queueOffset], [1, 10_005]);
      const plain = await s.call(RequestCode.SEND_MESSAGE_V2, { a: 'PG', b: 'Other', e: 1 });
      assert.equal(s.seen[1]!.e, 1);
      assert.equal(plain.extFields!.queueOffset, 5);
      const forwarded = await s.call(RequestCode.SEND_MESSAGE_V2, { a: 'PG', b: 'T', e: 1, lo: 'false' });
      assert.equal(s.seen[2]!.e, 1, 'lo=false: already rewritten by another broker');
      assert.equal(forwarded.extFields!.queueOffset, 5);
    } finally {
      s.close();
    }
  });

  it('a logic queue whose leader is on another broker → 501 NOT_LEADER_FOR_QUEUE', async () => {
    const s = await setup();
    try {
      const r = await s.call(RequestCode.SEND_MESSAGE_V2, { a: 'PG', b: 'T', e: 0 });
      assert.equal(r.code, ResponseCode.NOT_LEADER_FOR_QUEUE);
      assert.equal(r.remark, 'T-0 does not exit in request process of current broker b');
      assert.equal(s.seen.length, 0);
    } finally {
      s.close();
    }
  });

  it('pull on the new item: physical offset asked, logic offsets and offsetDelta answered; the commit offset stored as physical', async () => {
    const s = await setup();
    try {
      const r = await s.call(RequestCode.PULL_MESSAGE, { consumerGroup: 'G', topic: 'T', queueId: 1, queueOffset: 10_002, maxMsgNums: 32, sysFlag: 1, commitOffset: 10_001 });
      assert.deepEqual([s.seen[0]!.queueId, s.seen[0]!.queueOffset, s.seen[0]!.commitOffset, s.seen[0]!.sysFlag], [0, 2, 1, 1]);
      assert.deepEqual([r.extFields!.nextBeginOffset, r.extFields!.minOffset, r.extFields!.maxOffset, r.extFields!.offsetDelta], [10_004, 10_000, 10_006, 10_000]);
    } finally {
      s.close();
    }
  });

  it('an old item on another broker: forwarded with lo=false and the physical queue; SYSTEM_ERROR when it cannot be reached', async () => {
    const sent: Array<{ bname: string; ext: Record<string, ExtFieldValue> }> = [];
    const s = await setup(async (bname, req) => {
      sent.push({ bname, ext: { ...req.extFields } });
      if (req.code === RequestCode.QUERY_CONSUMER_OFFSET) return createResponseCommand(req, ResponseCode.SUCCESS, null, { offset: 7 });
      throw new Error('connect ECONNREFUSED');
    });
    try {
      // query: the new item (here) has no offset, the old one (on a) has 7 → logic 7
      const q = await s.call(RequestCode.QUERY_CONSUMER_OFFSET, { consumerGroup: 'G', topic: 'T', queueId: 1 });
      assert.equal(q.code, ResponseCode.SUCCESS);
      assert.equal(q.extFields!.offset, 7);
      assert.deepEqual([sent[0]!.bname, sent[0]!.ext.queueId, sent[0]!.ext.lo], ['a', 3, 'false']);
      const p = await s.call(RequestCode.PULL_MESSAGE, { consumerGroup: 'G', topic: 'T', queueId: 1, queueOffset: 7, maxMsgNums: 32, sysFlag: 3, commitOffset: 10_001 });
      assert.equal(p.code, ResponseCode.SYSTEM_ERROR);
      assert.match(p.remark!, /forwarding to broker a failed: connect ECONNREFUSED/);
      assert.deepEqual([sent[1]!.ext.queueId, sent[1]!.ext.queueOffset, sent[1]!.ext.sysFlag], [3, 7, 0], 'no suspend, no commit on a forwarded pull');
    } finally {
      s.close();
    }
  });

  it('a suspended pull answered later through the channel is rewritten too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-static-h-'));
    try {
      const mappings = new TopicQueueMappingManager(join(dir, 'm.json'), { clock: new ManualClock(1), brokerName: 'b' });
      await mappings.update({
        topic: 'T', scope: '__global__', totalQueues: 1, bname: 'b', epoch: 1, dirty: false,
        hostedQueues: new Map([[0, [{ gen: 0, queueId: 5, bname: 'b', logicOffset: 100, startOffset: 0, endOffset: -1, ...it0 }]]]),
      }, false);
      let held: { channel: RemotingChannel; request: RemotingCommand } | null = null;
      const handlers = new Map<number, RequestHandler>([[RequestCode.PULL_MESSAGE, (rc) => {
        held = rc;
        return null;
      }]]);
      wrapStaticTopicHandlers(handlers, { mappings });
      const out: RemotingCommand[] = [];
      const ch: RemotingChannel = { ...channel, send: (cmd) => out.push(cmd) };
      const request = createRequestCommand(RequestCode.PULL_MESSAGE, { consumerGroup: 'G', topic: 'T', queueId: 0, queueOffset: 101, maxMsgNums: 32, sysFlag: 2 });
      assert.equal(await handlers.get(RequestCode.PULL_MESSAGE)!({ channel: ch, request }), null);
      const h = held as unknown as { channel: RemotingChannel; request: RemotingCommand };
      assert.deepEqual([h.request.extFields!.queueId, h.request.extFields!.queueOffset], [5, 1]);
      h.channel.send(createResponseCommand(h.request, ResponseCode.SUCCESS, null, { nextBeginOffset: 2, minOffset: 0, maxOffset: 2, suggestWhichBrokerId: 0 }));
      assert.equal(out.length, 1);
      assert.deepEqual([out[0]!.extFields!.nextBeginOffset, out[0]!.extFields!.maxOffset, out[0]!.extFields!.offsetDelta], [102, 102, 100]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('without a forwarder an old item on another broker answers SYSTEM_ERROR; max offset reads the leader', async () => {
    const s = await setup();
    try {
      const u = await s.call(RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: 'G', topic: 'T', queueId: 1, commitOffset: 5 });
      assert.equal(u.code, ResponseCode.SYSTEM_ERROR);
      assert.match(u.remark!, /on broker a/);
      await s.call(RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: 'G', topic: 'T', queueId: 1, commitOffset: 10_003 });
      assert.deepEqual([s.seen[0]!.queueId, s.seen[0]!.commitOffset], [0, 3]);
      const m = await s.call(RequestCode.GET_MAX_OFFSET, { topic: 'T', queueId: 1 });
      assert.equal(m.extFields!.offset, 10_006);
    } finally {
      s.close();
    }
  });
});
