/**
 * Offset resets of a pop consumer group against `tsmq start` (child process, so it can be
 * SIGKILLed): raw POP_MESSAGE / ACK_MESSAGE frames (test/support/raw-remoting.ts), resets by
 * INVOKE_BROKER_TO_RESET_OFFSET (222: by time for the whole topic, by queue id + offset) and by
 * UPDATE_CONSUMER_OFFSET (15), with a SIGKILL and a clean restart in between. Asserts exactly which
 * messages each pop hands out afterwards (docs/internals/pop.md "Offset reset").
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RequestCode } from '../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../src/remoting/codes/response-code.js';
import { decodeRecord, readRecordTotalSize } from '../../src/common/message/record-codec.js';
import type { MessageExt } from '../../src/common/message/message.js';
import { rawInvoke, type RawReply } from '../support/raw-remoting.js';
import { TsmqProcess } from '../support/tsmq-process.js';
import { objectField, parseFastjson } from '../../src/cli/commands/admin-support.js';

const TOPIC = 'PopResetT';
const GROUP = 'PopResetG';
/** consumerOffset.json flushed every second: the first test waits for one flush before its reset. */
const OPTIONS = { flushConsumerOffsetInterval: '1000' };

function records(body: Buffer): MessageExt[] {
  const out: MessageExt[] = [];
  for (let at = 0; at < body.length; at += readRecordTotalSize(body, at)) out.push(decodeRecord(body, at));
  return out;
}

describe('pop consumer group offset reset (tsmq start, raw frames)', { timeout: 120_000 }, () => {
  let storeDir: string;
  let broker: TsmqProcess;
  let addr: string;

  before(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-popreset-'));
    broker = await TsmqProcess.start({ storeDir, options: OPTIONS });
    addr = broker.brokerAddr;
    const created = await rawInvoke(addr, { code: RequestCode.UPDATE_AND_CREATE_TOPIC, extFields: { topic: TOPIC, readQueueNums: '2', writeQueueNums: '2', perm: '6' } });
    assert.equal(created.header.code, 0, created.header.remark);
  });

  after(async () => {
    await broker?.kill();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  const restart = async (how: 'kill' | 'stop'): Promise<void> => {
    if (how === 'kill') await broker.kill();
    else assert.equal(await broker.stop(), 0);
    broker = await TsmqProcess.start({ storeDir, namesrvPort: broker.namesrvPort, listenPort: broker.listenPort, grpcPort: broker.grpcPort, options: OPTIONS });
    addr = broker.brokerAddr;
  };

  const send = async (queueId: number, body: string): Promise<void> => {
    const r = await rawInvoke(addr, {
      code: RequestCode.SEND_MESSAGE_V2,
      extFields: { a: 'P', b: TOPIC, c: 'TBW102', d: '2', e: String(queueId), f: '0', g: String(Date.now()), h: '0', i: 'TAGS\u0001TagA\u0002', j: '0', k: 'false' },
      body: Buffer.from(body),
    });
    assert.equal(r.header.code, 0, r.header.remark);
  };

  const pop = (): Promise<RawReply> =>
    rawInvoke(addr, {
      code: RequestCode.POP_MESSAGE,
      extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: '-1', maxMsgNums: '32', invisibleTime: '60000', pollTime: '0', bornTime: String(Date.now()), initMode: '0', expType: 'TAG', exp: '*', order: 'false' },
    });

  /** Pops until nothing comes; returns the bodies (sorted) and what is needed to ack each. */
  const popAll = async (): Promise<{ bodies: string[]; acks: Array<{ queueId: number; offset: number; extraInfo: string }> }> => {
    const acks: Array<{ queueId: number; offset: number; extraInfo: string }> = [];
    const bodies: string[] = [];
    for (;;) {
      const r = await pop();
      if (r.header.code === ResponseCode.POLLING_TIMEOUT) break;
      assert.equal(r.header.code, ResponseCode.SUCCESS, r.header.remark);
      const h = r.header.extFields!;
      const starts = new Map(h.startOffsetInfo!.split(';').map((e) => e.split(' ')).map((f) => [Number(f[1]), f[2]!]));
      for (const m of records(r.body)) {
        bodies.push(m.body.toString());
        acks.push({ queueId: m.queueId, offset: m.queueOffset, extraInfo: `${starts.get(m.queueId)} ${h.popTime} ${h.invisibleTime} ${h.reviveQid} 0 broker-a ${m.queueId} ${m.queueOffset}` });
      }
    }
    return { bodies: bodies.sort(), acks };
  };

  const ack = (a: { queueId: number; offset: number; extraInfo: string }): Promise<RawReply> =>
    rawInvoke(addr, { code: RequestCode.ACK_MESSAGE, extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: String(a.queueId), offset: String(a.offset), extraInfo: a.extraInfo } });

  const reset = (fields: Record<string, string>): Promise<RawReply> =>
    rawInvoke(addr, { code: RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, extFields: { topic: TOPIC, group: GROUP, isForce: 'true', ...fields } });

  const offsetTable = (r: RawReply): Record<number, number> => {
    const out: Record<number, number> = {};
    for (const [key, v] of Object.entries(objectField(parseFastjson(r.body.toString('utf8')), 'offsetTable'))) out[(JSON.parse(key) as { queueId: number }).queueId] = Number(v);
    return out;
  };

  it('backwards by time replays everything, also what was in flight, and survives a SIGKILL; receipts from before are refused', async () => {
    const t0 = Date.now() - 1;
    for (const [q, b] of [[0, 'a0'], [0, 'a1'], [0, 'a2'], [1, 'b0'], [1, 'b1'], [1, 'b2']] as const) await send(q, b);
    const first = await popAll();
    assert.deepEqual(first.bodies, ['a0', 'a1', 'a2', 'b0', 'b1', 'b2']);
    const inFlight = first.acks.filter((a) => a.offset === 2); // a2 and b2 are left unacked
    for (const a of first.acks.filter((x) => x.offset !== 2)) assert.equal((await ack(a)).header.code, ResponseCode.SUCCESS);
    assert.deepEqual((await popAll()).bodies, [], 'a2 and b2 are in flight');
    // a periodic flush persists the committed offsets 2 (as acked) before the reset, the SIGKILL
    // follows at once: the reset must not depend on the next flush
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const r = await reset({ timestamp: String(t0) });
    assert.equal(r.header.code, ResponseCode.SUCCESS, r.header.remark);
    assert.deepEqual(offsetTable(r), { 0: 0, 1: 0 });
    await restart('kill');

    const stale = await ack(inFlight[0]!);
    assert.equal(stale.header.code, ResponseCode.NO_MESSAGE, 'an ack of a delivery from before the reset is refused');
    const replay = await popAll();
    assert.deepEqual(replay.bodies, ['a0', 'a1', 'a2', 'b0', 'b1', 'b2'], 'the same messages again after the reset and a SIGKILL');
    assert.equal((await ack(inFlight[1]!)).header.code, ResponseCode.NO_MESSAGE, 'the old delivery stays stale after the redelivery');
    for (const a of replay.acks) assert.equal((await ack(a)).header.code, ResponseCode.SUCCESS);
    const offsets = await rawInvoke(addr, { code: RequestCode.QUERY_CONSUMER_OFFSET, extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: '1' } });
    assert.equal(offsets.header.extFields!.offset, '3');
  });

  it('one queue by offset (222 queueId + offset), forwards to the end (timestamp -1) with a clean restart, and UPDATE_CONSUMER_OFFSET backwards', async () => {
    const one = await reset({ timestamp: '0', queueId: '1', offset: '1' });
    assert.equal(one.header.code, ResponseCode.SUCCESS, one.header.remark);
    assert.deepEqual(offsetTable(one), { 1: 1 });
    const outOfRange = await reset({ timestamp: '0', queueId: '1', offset: '9' });
    assert.equal(outOfRange.header.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(outOfRange.header.remark, 'Target offset 9 not in consume queue range [0-3]');
    const q1 = await popAll();
    assert.deepEqual(q1.bodies, ['b1', 'b2'], 'only queue 1 from offset 1');
    for (const a of q1.acks) await ack(a);

    for (const [q, b] of [[0, 'a3'], [1, 'b3'], [0, 'a4']] as const) await send(q, b);
    const fwd = await reset({ timestamp: '-1' });
    assert.equal(fwd.header.code, ResponseCode.SUCCESS, fwd.header.remark);
    assert.deepEqual(offsetTable(fwd), { 0: 5, 1: 4 });
    await restart('stop');
    assert.deepEqual((await popAll()).bodies, [], 'a3, b3, a4 skipped');
    await send(1, 'b4');
    const next = await popAll();
    assert.deepEqual(next.bodies, ['b4']);
    for (const a of next.acks) await ack(a);

    const upd = await rawInvoke(addr, { code: RequestCode.UPDATE_CONSUMER_OFFSET, extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: '0', commitOffset: '3' } });
    assert.equal(upd.header.code, ResponseCode.SUCCESS, upd.header.remark);
    assert.deepEqual((await popAll()).bodies, ['a3', 'a4'], 'queue 0 from the committed offset 3');
  });
  it('222 naming one queue of a group without pop state commits that queue only and creates no pop state', async () => {
    const plain = await rawInvoke(addr, { code: RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, extFields: { topic: TOPIC, group: 'PlainG', timestamp: '0', isForce: 'true', queueId: '0', offset: '2' } });
    assert.equal(plain.header.code, ResponseCode.SUCCESS, plain.header.remark);
    assert.deepEqual(offsetTable(plain), { 0: 2 });
    const q = (queueId: string): Promise<RawReply> => rawInvoke(addr, { code: RequestCode.QUERY_CONSUMER_OFFSET, extFields: { consumerGroup: 'PlainG', topic: TOPIC, queueId, setZeroIfNotFound: 'false' } });
    assert.equal((await q('0')).header.extFields!.offset, '2');
    assert.equal((await q('1')).header.code, ResponseCode.QUERY_NOT_FOUND);
    // an online pull consumer learns it as in Apache 5.3.3 (useServerSideResetOffset): its next pull
    // of the queue, from its own position 3, answers PULL_OFFSET_MOVED with nextBeginOffset 2, once
    const pull = (offset: number): Promise<RawReply> =>
      rawInvoke(addr, {
        code: RequestCode.PULL_MESSAGE,
        extFields: { consumerGroup: 'PlainG', topic: TOPIC, queueId: '0', queueOffset: String(offset), maxMsgNums: '32', sysFlag: '5', commitOffset: '3', suspendTimeoutMillis: '0', subscription: '*', subVersion: '1', expressionType: 'TAG' },
      });
    const moved = await pull(3);
    assert.equal(moved.header.code, ResponseCode.PULL_OFFSET_MOVED, moved.header.remark);
    assert.equal(moved.header.extFields!.nextBeginOffset, '2');
    assert.equal((await q('0')).header.extFields!.offset, '2', 'the stale commitOffset riding on that pull is not stored');
    const from2 = await pull(2);
    assert.equal(from2.header.code, ResponseCode.SUCCESS, from2.header.remark);
    assert.deepEqual(records(from2.body).map((m) => m.queueOffset)[0], 2);
    assert.equal((await pull(3)).header.code, ResponseCode.SUCCESS, 'the reset is taken once');
    // the whole-topic form still takes the 4.9 path for it (no consumer online)
    const whole = await rawInvoke(addr, { code: RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, extFields: { topic: TOPIC, group: 'PlainG', timestamp: '0', isForce: 'true' } });
    assert.equal(whole.header.code, ResponseCode.SYSTEM_ERROR);
    assert.match(whole.header.remark ?? '', /THe consumer group <PlainG> not exist/);
  });
});
