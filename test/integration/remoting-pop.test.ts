/**
 * Remoting pop consumption (RocketMQ 5.x request codes) judged on the wire: an in-process
 * BrokerController (real store, real sockets, no nameserver), requests as JSON frames
 * (test/support/raw-remoting.ts writes them independently of src/remoting) or through tsmq's
 * RemotingClient where a request must share a connection with a heartbeat. Every answer's code,
 * remark and header fields are asserted: POP_MESSAGE 200050, ACK_MESSAGE 200051,
 * BATCH_ACK_MESSAGE 200151, PEEK_MESSAGE 200052, CHANGE_MESSAGE_INVISIBLETIME 200053,
 * NOTIFICATION 200054, QUERY_ASSIGNMENT 400, SET_MESSAGE_REQUEST_MODE 401, GET_ALL_MESSAGE_REQUEST_MODE 402.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerController } from '../../src/broker/broker-controller.js';
import { RemotingClient } from '../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../src/remoting/codes/response-code.js';
import { silentLogger } from '../../src/common/logging/logger.js';
import { decodeRecord, readRecordTotalSize } from '../../src/common/message/record-codec.js';
import type { MessageExt } from '../../src/common/message/message.js';
import { rawInvoke, type RawReply } from '../support/raw-remoting.js';

const TOPIC = 'PopT';
const GROUP = 'PopG';

function records(body: Buffer): MessageExt[] {
  const out: MessageExt[] = [];
  for (let at = 0; at < body.length; at += readRecordTotalSize(body, at)) out.push(decodeRecord(body, at));
  return out;
}

describe('remoting pop request codes (raw frames against an in-process broker)', { timeout: 60_000 }, () => {
  let dir: string;
  let broker: BrokerController;
  let client: RemotingClient;
  let addr: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsmq-rpop-'));
    broker = await BrokerController.create({
      brokerConfig: { storePathRootDir: dir, listenPort: '0', namesrvAddr: '', brokerName: 'broker-p', mappedFileSizeCommitLog: String(1024 * 1024) },
      logger: silentLogger,
    });
    await broker.start();
    addr = `127.0.0.1:${broker.port}`;
    client = new RemotingClient({ logger: silentLogger });
    const created = await client.invokeSync(addr, createRequestCommand(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: TOPIC, readQueueNums: 2, writeQueueNums: 2, perm: 6 }), 3000);
    assert.equal(created.code, 0, created.remark ?? '');
  });

  after(async () => {
    await client?.close();
    await broker?.shutdown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const send = async (queueId: number, body: string, tags = 'TagA'): Promise<void> => {
    const r = await client.invokeSync(
      addr,
      createRequestCommand(RequestCode.SEND_MESSAGE_V2, { a: 'P', b: TOPIC, c: 'TBW102', d: 2, e: queueId, f: 0, g: Date.now(), h: 0, i: `TAGS\u0001${tags}\u0002`, j: 0, k: false }, Buffer.from(body)),
      3000,
    );
    assert.equal(r.code, 0, r.remark ?? '');
  };

  const pop = (over: Record<string, string> = {}): Promise<RawReply> =>
    rawInvoke(addr, {
      code: RequestCode.POP_MESSAGE,
      extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: '-1', maxMsgNums: '32', invisibleTime: '60000', pollTime: '0', bornTime: String(Date.now()), initMode: '0', expType: 'TAG', exp: '*', order: 'false', ...over },
    });

  const ack = (queueId: number, offset: number, extraInfo: string, over: Record<string, string> = {}): Promise<RawReply> =>
    rawInvoke(addr, { code: RequestCode.ACK_MESSAGE, extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: String(queueId), offset: String(offset), extraInfo, ...over } });

  /** The POP_CK extra info Apache's 5.3.3 client builds for a message from a pop reply. */
  const extraInfoOf = (reply: RawReply, queueId: number, offset: number): string => {
    const h = reply.header.extFields!;
    const start = h.startOffsetInfo!.split(';').map((e) => e.split(' ')).find((f) => Number(f[1]) === queueId)![2];
    return `${start} ${h.popTime} ${h.invisibleTime} ${h.reviveQid} 0 broker-p ${queueId} ${offset}`;
  };

  it('POP_MESSAGE refuses bad requests with Apache codes; PopMessageResponseHeader fields ride along', async () => {
    const noTopic = await pop({ topic: 'NoSuchTopic' });
    assert.equal(noTopic.header.code, ResponseCode.TOPIC_NOT_EXIST);
    assert.match(noTopic.header.remark!, /topic\[NoSuchTopic\] not exist/);
    assert.equal(noTopic.header.extFields!.popTime, '0');
    assert.equal(noTopic.header.extFields!.restNum, '0');
    assert.equal((await pop({ maxMsgNums: '33' })).header.code, ResponseCode.INVALID_PARAMETER);
    const badQueue = await pop({ queueId: '2' });
    assert.equal(badQueue.header.code, ResponseCode.INVALID_PARAMETER);
    assert.match(badQueue.header.remark!, /queueId\[2\] is illegal/);
    const late = await pop({ bornTime: String(Date.now() - 10_000), pollTime: '1000' });
    assert.equal(late.header.code, ResponseCode.POLLING_TIMEOUT);
    assert.match(late.header.remark!, /timeout too much/);
    const badExp = await pop({ expType: 'SQL92', exp: 'a >' });
    assert.equal(badExp.header.code, ResponseCode.SYSTEM_ERROR);
    assert.match(badExp.header.remark!, /does not support consumer to filter message by SQL92/);
    const empty = await pop();
    assert.equal(empty.header.code, ResponseCode.POLLING_TIMEOUT);
    assert.equal(empty.header.remark, 'NO_MESSAGE_IN_QUEUE');
    assert.equal(empty.header.extFields!.startOffsetInfo, '');
    assert.equal(empty.header.extFields!.invisibleTime, '60000');
  });

  it('pop → peek → ack / change / batch ack, with stale and malformed extra info refused', async () => {
    await send(0, 'a0');
    await send(0, 'a1');
    await send(1, 'b0');
    await send(1, 'b1', 'TagB');
    const before = Date.now();
    const r = await pop({ invisibleTime: '60000' });
    assert.equal(r.header.code, ResponseCode.SUCCESS);
    assert.equal(r.header.remark, 'FOUND');
    const h = r.header.extFields!;
    assert.ok(Number(h.popTime) >= before - 5 && Number(h.popTime) <= Date.now(), `popTime ${h.popTime}`);
    assert.equal(h.invisibleTime, '60000');
    assert.equal(h.reviveQid, '0');
    assert.equal(h.restNum, '0');
    assert.deepEqual(h.startOffsetInfo!.split(';').sort(), ['0 0 0', '0 1 0']);
    assert.deepEqual(h.msgOffsetInfo!.split(';').sort(), ['0 0 0,1', '0 1 0,1']);
    assert.equal(h.orderCountInfo, undefined);
    const msgs = records(r.body);
    assert.deepEqual(msgs.map((m) => `${m.queueId}:${m.queueOffset}:${m.body.toString()}:${m.reconsumeTimes}`).sort(), ['0:0:a0:0', '0:1:a1:0', '1:0:b0:0', '1:1:b1:0']);

    // a tag filter sees nothing new: everything is in flight
    assert.equal((await pop({ exp: 'TagB' })).header.code, ResponseCode.POLLING_TIMEOUT);

    const peek = await rawInvoke(addr, { code: RequestCode.PEEK_MESSAGE, extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: '0', maxMsgNums: '10' } });
    assert.equal(peek.header.code, ResponseCode.SUCCESS);
    assert.equal(peek.header.remark, 'FOUND');
    assert.deepEqual(records(peek.body).map((m) => m.body.toString()), ['a0', 'a1']);
    assert.equal(peek.header.extFields!.restNum, '0');

    // ack a0
    const e00 = extraInfoOf(r, 0, 0);
    assert.equal((await ack(0, 0, e00)).header.code, ResponseCode.SUCCESS);
    const again = await ack(0, 0, e00);
    assert.equal(again.header.code, ResponseCode.NO_MESSAGE);
    assert.match(again.header.remark!, /already acked/);
    const garbage = await ack(0, 1, 'garbage');
    assert.equal(garbage.header.code, ResponseCode.INVALID_PARAMETER);
    assert.match(garbage.header.remark!, /extraInfo has 1 fields/);
    const wrongTime = await ack(0, 1, extraInfoOf(r, 0, 1).replace(` ${h.popTime} `, ` ${Number(h.popTime) - 1} `));
    assert.equal(wrongTime.header.code, ResponseCode.NO_MESSAGE);
    assert.match(wrongTime.header.remark!, /stale/);
    const offsetOut = await ack(0, 99, extraInfoOf(r, 0, 1));
    assert.equal(offsetOut.header.code, ResponseCode.NO_MESSAGE);
    assert.match(offsetOut.header.remark!, /offset is illegal, key:PopT@0, commit:99, store:0~2/);
    assert.equal((await ack(7, 0, e00)).header.code, ResponseCode.MESSAGE_ILLEGAL);
    assert.equal((await ack(0, 0, e00, { topic: 'NoSuchTopic' })).header.code, ResponseCode.TOPIC_NOT_EXIST);

    // change a1's invisible time to 0: its old extra info goes stale, the next pop redelivers it with reconsumeTimes 1
    const e01 = extraInfoOf(r, 0, 1);
    const change = await rawInvoke(addr, {
      code: RequestCode.CHANGE_MESSAGE_INVISIBLETIME,
      extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: '0', offset: '1', extraInfo: e01, invisibleTime: '0' },
    });
    assert.equal(change.header.code, ResponseCode.SUCCESS);
    assert.equal(change.header.extFields!.invisibleTime, '0');
    assert.equal(change.header.extFields!.reviveQid, '0');
    assert.ok(Math.abs(Number(change.header.extFields!.popTime) - Date.now()) < 2000);
    const staleChange = await rawInvoke(addr, {
      code: RequestCode.CHANGE_MESSAGE_INVISIBLETIME,
      extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: '0', offset: '1', extraInfo: e01, invisibleTime: '1000' },
    });
    assert.equal(staleChange.header.code, ResponseCode.NO_MESSAGE);
    assert.equal(staleChange.header.extFields!.popTime, '0');
    assert.equal((await ack(0, 1, e01)).header.code, ResponseCode.NO_MESSAGE);
    const r2 = await pop({ invisibleTime: '30000' });
    assert.equal(r2.header.code, ResponseCode.SUCCESS);
    assert.deepEqual(records(r2.body).map((m) => `${m.queueId}:${m.queueOffset}:${m.reconsumeTimes}`), ['0:1:1']);
    assert.equal(r2.header.extFields!.startOffsetInfo, '0 0 1');
    assert.equal((await ack(0, 1, extraInfoOf(r2, 0, 1))).header.code, ResponseCode.SUCCESS);

    // batch ack of queue 1, offsets 0 and 1: BitSet {0,1} = byte 0b11
    const bitSet = Buffer.from([0b11]).toString('base64');
    const batchBody = JSON.stringify({ brokerName: 'broker-p', acks: [{ c: GROUP, t: TOPIC, r: '0', so: 0, q: 1, rq: 0, pt: Number(h.popTime), it: 60000, b: bitSet }] });
    const batch = await rawInvoke(addr, { code: RequestCode.BATCH_ACK_MESSAGE, extFields: {}, body: Buffer.from(batchBody) });
    assert.equal(batch.header.code, ResponseCode.SUCCESS, batch.header.remark);
    const batchAgain = await rawInvoke(addr, { code: RequestCode.BATCH_ACK_MESSAGE, extFields: {}, body: Buffer.from(batchBody) });
    assert.equal(batchAgain.header.code, ResponseCode.NO_MESSAGE);
    assert.match(batchAgain.header.remark!, /^2 of 2 acks refused/);
    assert.equal((await rawInvoke(addr, { code: RequestCode.BATCH_ACK_MESSAGE, extFields: {} })).header.code, ResponseCode.NO_MESSAGE);
    assert.equal((await rawInvoke(addr, { code: RequestCode.BATCH_ACK_MESSAGE, extFields: {}, body: Buffer.from('{nope') })).header.code, ResponseCode.INVALID_PARAMETER);

    // everything acked: peek finds nothing, the group's offsets moved to the end of both queues
    const peekEmpty = await rawInvoke(addr, { code: RequestCode.PEEK_MESSAGE, extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: '-1', maxMsgNums: '10' } });
    assert.equal(peekEmpty.header.code, ResponseCode.PULL_NOT_FOUND);
    for (const queueId of [0, 1]) {
      const off = await client.invokeSync(addr, createRequestCommand(RequestCode.QUERY_CONSUMER_OFFSET, { consumerGroup: GROUP, topic: TOPIC, queueId }), 3000);
      assert.equal(Number(off.extFields?.offset), 2, `queue ${queueId} offset`);
    }
  });

  it('NOTIFICATION and POP_MESSAGE long polling wake on arrival; unacked messages come back after the invisible time', async () => {
    const note = await rawInvoke(addr, { code: RequestCode.NOTIFICATION, extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: '-1', pollTime: '0', bornTime: String(Date.now()) } });
    assert.equal(note.header.code, ResponseCode.SUCCESS);
    assert.equal(note.header.extFields!.hasMsg, 'false');
    assert.equal(note.header.extFields!.pollingFull, 'false');

    const started = Date.now();
    const parked = pop({ pollTime: '8000', invisibleTime: '1000', queueId: '1' });
    const noteParked = rawInvoke(addr, { code: RequestCode.NOTIFICATION, extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: '-1', pollTime: '8000', bornTime: String(Date.now()) } });
    await new Promise((r) => setTimeout(r, 300));
    await send(1, 'late');
    const got = await parked;
    const woke = Date.now() - started;
    assert.equal(got.header.code, ResponseCode.SUCCESS);
    assert.ok(woke < 3000, `long poll answered after ${woke} ms`);
    assert.deepEqual(records(got.body).map((m) => m.body.toString()), ['late']);
    const noted = await noteParked;
    assert.equal(noted.header.extFields!.hasMsg, 'true');

    // not acked: invisible for 1 s, then popped again with reconsumeTimes 1
    assert.equal((await pop({ queueId: '1' })).header.code, ResponseCode.POLLING_TIMEOUT);
    const back = await pop({ queueId: '1', pollTime: '5000' });
    assert.equal(back.header.code, ResponseCode.SUCCESS);
    assert.deepEqual(records(back.body).map((m) => `${m.body.toString()}:${m.reconsumeTimes}`), ['late:1']);
    assert.ok(Date.now() - started >= 1000);
    assert.equal((await ack(1, 2, extraInfoOf(back, 1, 2))).header.code, ResponseCode.SUCCESS);
  });

  it('SET_MESSAGE_REQUEST_MODE / QUERY_ASSIGNMENT / GET_ALL_MESSAGE_REQUEST_MODE', async () => {
    const setMode = (body: object) => rawInvoke(addr, { code: RequestCode.SET_MESSAGE_REQUEST_MODE, extFields: {}, body: Buffer.from(JSON.stringify(body)) });
    const retry = await setMode({ topic: `%RETRY%${GROUP}`, consumerGroup: GROUP, mode: 'POP', popShareQueueNum: 0 });
    assert.equal(retry.header.code, ResponseCode.NO_PERMISSION);
    assert.equal(retry.header.remark, 'retry topic is not allowed to set mode');
    assert.equal((await setMode({ topic: 'NoSuchTopic', consumerGroup: GROUP, mode: 'POP' })).header.code, ResponseCode.TOPIC_NOT_EXIST);
    assert.equal((await setMode({ topic: TOPIC, consumerGroup: GROUP, mode: 'PUSH' })).header.code, ResponseCode.SYSTEM_ERROR);
    assert.equal((await setMode({ topic: TOPIC, consumerGroup: GROUP, mode: 'POP', popShareQueueNum: 0 })).header.code, ResponseCode.SUCCESS);
    const file = JSON.parse(readFileSync(join(dir, 'config', 'messageRequestMode.json'), 'utf8'));
    assert.deepEqual(file.messageRequestModeMap[TOPIC][GROUP], { topic: TOPIC, consumerGroup: GROUP, mode: 'POP', popShareQueueNum: 0 });

    const query = async (clientId: string, topic = TOPIC) => {
      const r = await client.invokeSync(
        addr,
        createRequestCommand(RequestCode.QUERY_ASSIGNMENT, null, Buffer.from(JSON.stringify({ topic, consumerGroup: GROUP, clientId, strategyName: 'AVG', messageModel: 'CLUSTERING' }))),
        3000,
      );
      assert.equal(r.code, ResponseCode.SUCCESS);
      return JSON.parse(r.body!.toString()) as { messageQueueAssignments?: Array<{ messageQueue: { topic: string; brokerName: string; queueId: number }; mode: string }> };
    };
    // no client of the group has sent a heartbeat: no valid answer
    assert.deepEqual(await query('c1'), {});
    const heartbeat = (clientId: string) =>
      client.invokeSync(
        addr,
        createRequestCommand(
          RequestCode.HEART_BEAT,
          null,
          Buffer.from(
            JSON.stringify({
              clientID: clientId,
              consumerDataSet: [
                {
                  groupName: GROUP,
                  consumeType: 'CONSUME_PASSIVELY',
                  messageModel: 'CLUSTERING',
                  consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
                  subscriptionDataSet: [{ topic: TOPIC, subString: '*', tagsSet: [], codeSet: [], subVersion: 1, expressionType: 'TAG', classFilterMode: false }],
                  unitMode: false,
                },
              ],
              producerDataSet: [],
            }),
          ),
        ),
        3000,
      );
    assert.equal((await heartbeat('c1')).code, 0);
    assert.deepEqual(await query('c1'), { messageQueueAssignments: [{ messageQueue: { brokerName: 'broker-p', queueId: -1, topic: TOPIC }, mode: 'POP' }] });
    // a retry topic is always PULL; an unknown topic has no valid answer
    assert.deepEqual(await query('c1', 'NoSuchTopic'), {});

    // popShareQueueNum 1 with 3 clients: each gets its own AVG share plus the next client's
    assert.equal((await setMode({ topic: TOPIC, consumerGroup: GROUP, mode: 'POP', popShareQueueNum: 1 })).header.code, ResponseCode.SUCCESS);
    const c2 = new RemotingClient({ logger: silentLogger });
    const c3 = new RemotingClient({ logger: silentLogger });
    try {
      for (const [c, id] of [[c2, 'c2'], [c3, 'c3']] as const) {
        const body = JSON.stringify({ clientID: id, consumerDataSet: [{ groupName: GROUP, consumeType: 'CONSUME_PASSIVELY', messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET', subscriptionDataSet: [], unitMode: false }], producerDataSet: [] });
        assert.equal((await c.invokeSync(addr, createRequestCommand(RequestCode.HEART_BEAT, null, Buffer.from(body)), 3000)).code, 0);
      }
      // 2 queues, 3 clients (more clients than queues): one queue each, index % 2
      const q1 = await query('c1');
      assert.deepEqual(q1.messageQueueAssignments!.map((a) => `${a.messageQueue.queueId}:${a.mode}`), ['0:POP']);
    } finally {
      await c2.close();
      await c3.close();
    }
    const all = await rawInvoke(addr, { code: RequestCode.GET_ALL_MESSAGE_REQUEST_MODE, extFields: {} });
    assert.equal(all.header.code, ResponseCode.SUCCESS);
    assert.equal(JSON.parse(all.body.toString()).messageRequestModeMap[TOPIC][GROUP].popShareQueueNum, 1);
  });
});
