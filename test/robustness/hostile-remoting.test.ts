/**
 * Hostile and careless remoting input against one real `tsmq start` while the real ali-ons
 * client (unmodified, from npm) keeps producing and a two-member ali-ons consumer group keeps
 * consuming. Each attack asserts the exact answer (a code and remark naming the problem, or the
 * connection closed for a frame that cannot be decoded) and that the broker still answers a
 * normal send right after it; at the end every message the producer got SEND_OK for has been
 * consumed (no acknowledged message lost) and the broker process never exited.
 *
 * What this pins was already right before the robustness pass (see docs/robustness.md); the
 * defects found by it have their own failing-before tests (send-sysflag.test.ts, ...).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../support/tsmq-process.js';
import { rawInvoke, type RawReply } from '../support/raw-remoting.js';
import { LeanClient } from '../support/lean-client.js';
import { createConsumer, newMessage, startProducer, waitUntil, type OnsConsumer, type OnsMessage, type OnsProducer } from '../support/ali-ons-client.js';

const TOPIC = 'HOSTILE_T';
const GROUP = 'GID_HOSTILE';

function frame(length: number, typeAndHeaderLength: number, rest: Buffer = Buffer.alloc(0)): Buffer {
  const out = Buffer.alloc(8 + rest.length);
  out.writeInt32BE(length, 0);
  out.writeInt32BE(typeAndHeaderLength, 4);
  rest.copy(out, 8);
  return out;
}

describe('hostile remoting input while ali-ons produces and consumes', { timeout: 180_000 }, () => {
  let storeDir: string;
  let broker: TsmqProcess;
  let producer: OnsProducer;
  const consumers: OnsConsumer[] = [];
  const acked = new Set<string>();
  const received = new Set<string>();
  const sendErrors: string[] = [];
  let producing = true;
  let producerLoop: Promise<void>;
  let lean: LeanClient;

  before(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-hostile-'));
    broker = await TsmqProcess.start({ storeDir, options: { flushIntervalCommitLog: '100' } });
    lean = new LeanClient(broker.brokerAddr);
    await lean.ready;
    assert.equal((await lean.invoke(17, { topic: TOPIC, readQueueNums: 4, writeQueueNums: 4, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false })).code, 0);
    producer = await startProducer(broker.namesrvAddr, 'PID_HOSTILE');
    for (const name of ['h1', 'h2']) {
      const c = createConsumer(broker.namesrvAddr, GROUP, { instanceName: name });
      consumers.push(c);
      c.subscribe(TOPIC, '*', async (msg: OnsMessage) => {
        received.add(msg.body.toString());
      });
      await c.ready();
    }
    let i = 0;
    producerLoop = (async () => {
      while (producing) {
        const body = `hostile-${i++}`;
        try {
          const r = await producer.send(newMessage(TOPIC, 'TagH', Buffer.from(body)));
          if (r.sendStatus === 'SEND_OK') acked.add(body);
        } catch (e) {
          sendErrors.push((e as Error).message);
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
  });

  after(async () => {
    producing = false;
    await producerLoop;
    lean?.close();
    for (const c of consumers) await c.close().catch(() => {});
    await producer?.close().catch(() => {});
    await broker?.stop();
    rmSync(storeDir, { recursive: true, force: true });
  });

  /** A normal send right after an attack is stored (the broker still serves). */
  async function stillServes(after: string): Promise<void> {
    const r = await lean.send(TOPIC, 0, Buffer.from(`probe after ${after}`));
    assert.equal(r.code, 0, `send after ${after}: ${r.code} ${r.remark}`);
    assert.equal(broker.child.exitCode, null, `broker alive after ${after}`);
  }

  async function raw(bytes: Buffer): Promise<RawReply> {
    return await rawInvoke(broker.brokerAddr, null, bytes, 5000);
  }

  it('undecodable frames close only their own connection', async () => {
    const json = Buffer.from('{"code":310}');
    const cases: Array<[string, Buffer]> = [
      ['length above the 16 MiB frame limit', frame(0x7fffffff, 2, Buffer.from('{}'))],
      ['negative length', frame(-5, 2, Buffer.from('{}'))],
      ['header length larger than the frame', frame(12, 1000, Buffer.from('{}xxxxxx'))],
      ['JSON header garbage', frame(4 + 5, 5, Buffer.from('{{{{{'))],
      ['unknown serialize type 7', frame(4 + json.length, (7 << 24) | json.length, json)],
      ['ROCKETMQ binary header with lying lengths', frame(4 + 20, (1 << 24) | 20, Buffer.alloc(20, 0xff))],
    ];
    for (const [name, bytes] of cases) {
      assert.equal((await raw(bytes)).closed, true, name);
      await stillServes(name);
    }
    const unknown = Buffer.from(JSON.stringify({ code: 99999, language: 'JAVA', version: 1, opaque: 5, flag: 0 }));
    const r = await raw(frame(4 + unknown.length, unknown.length, unknown));
    assert.deepEqual([r.header.code, r.header.remark], [3, ' request type 99999 not supported']);
  });

  it('SEND_MESSAGE_V2 with wrong header values gets a remark naming the field; nothing is stored', async () => {
    const base = { a: 'PID_RAW', b: TOPIC, c: 'TBW102', d: 4, e: 0, f: 0, g: Date.now(), h: 0, i: '', j: 0, k: false };
    const send = async (ext: Record<string, unknown>, body: Buffer = Buffer.from("x"), code = 310) => (await rawInvoke(broker.brokerAddr, { code, extFields: { ...base, ...ext }, body })).header;
    const cases: Array<[string, Record<string, unknown>, number, RegExp, Buffer?, number?]> = [
      ['queueId 99999', { e: 99999 }, 1, /^request queueId\[99999\] is illegal, topic HOSTILE_T has 4 write \/ 4 read queues/],
      ['queueId text', { e: 'abc' }, 1, /^the custom field <e> is not a number: abc$/],
      ['queueId out of int range', { e: '10000000000' }, 1, /^the custom field <e> is out of range/],
      ['sysFlag text', { f: 'zz' }, 1, /^the custom field <f> is not a number: zz$/],
      ['bornTimestamp text', { g: 'yesterday' }, 1, /^the custom field <g> is not a number: yesterday$/],
      ['topic missing', { b: undefined }, 1, /^the custom field <b> is null$/],
      ['topic with a slash', { b: '../../etc' }, 13, /contains characters other than/],
      ['topic of 200 characters', { b: 'T'.repeat(200) }, 13, /is too long: 200 characters, the limit is 127/],
      ['system topic', { b: 'SCHEDULE_TOPIC_XXXX' }, 16, /^Sending message to topic\[SCHEDULE_TOPIC_XXXX\] is forbidden\.$/],
      ['body over maxMessageSize', {}, 13, /^message body size 4194305 exceeds maxMessageSize 4194304/, Buffer.alloc(4 * 1024 * 1024 + 1)],
      ['batch whose item length lies', { m: true }, 13, /^batch item 0 at byte 0 is torn/, Buffer.from([0, 0, 0, 99, 1, 2, 3]), 320],
    ];
    for (const [name, ext, code, remark, body, reqCode] of cases) {
      const h = await send(ext, body, reqCode);
      assert.equal(h.code, code, `${name}: ${h.code} ${h.remark}`);
      assert.match(h.remark ?? '', remark, name);
    }
    const maxQ0 = await lean.invoke(30, { topic: TOPIC, queueId: 0 });
    assert.equal(maxQ0.code, 0);
    await stillServes('bad send headers');
  });

  it('admin requests with illegal names or values are refused with the reason; system topics cannot be deleted', async () => {
    const call = async (code: number, ext: Record<string, unknown>, body?: Buffer) => (await rawInvoke(broker.brokerAddr, { code, extFields: ext, ...(body ? { body } : {}) })).header;
    const cases: Array<[string, number, Record<string, unknown>, Buffer | undefined, number, RegExp]> = [
      ['updateTopic a/b', 17, { topic: 'a/b', readQueueNums: 4, writeQueueNums: 4, perm: 6 }, undefined, 1, /contains characters other than/],
      ['updateTopic TBW102', 17, { topic: 'TBW102', readQueueNums: 4, writeQueueNums: 4, perm: 6 }, undefined, 1, /^The topic\[TBW102\] is conflict with system topic\.$/],
      ['updateTopic negative queues', 17, { topic: 'OkTopic', readQueueNums: -1, writeQueueNums: -4, perm: 6 }, undefined, 1, /invalid queue numbers or perm/],
      ['updateSubGroup a/b', 200, {}, Buffer.from(JSON.stringify({ groupName: 'a/b' })), 29, /contains characters other than/],
      ['updateSubGroup not JSON', 200, {}, Buffer.from('{"groupName":'), 1, /^subscription group body is not JSON/],
      ['deleteTopic SCHEDULE_TOPIC_XXXX', 215, { topic: 'SCHEDULE_TOPIC_XXXX' }, undefined, 1, /is conflict with system topic/],
      ['deleteTopic RMQ_SYS_TRANS_HALF_TOPIC', 215, { topic: 'RMQ_SYS_TRANS_HALF_TOPIC' }, undefined, 1, /is conflict with system topic/],
      ['updateBrokerConfig wrong type', 25, {}, Buffer.from('maxMessageSize=abc\n'), 1, /^invalid config maxMessageSize=abc: not a number$/],
      ['updateBrokerConfig bad enum', 25, {}, Buffer.from('flushDiskType=SOMETIMES\n'), 1, /must be ASYNC_FLUSH or SYNC_FLUSH/],
      ['commit offset for an unknown topic', 15, { consumerGroup: GROUP, topic: 'NO_SUCH_T', queueId: 0, commitOffset: 1 }, undefined, 17, /^Topic NO_SUCH_T not exist!$/],
      ['commit offset for an illegal group', 15, { consumerGroup: 'G@x', topic: TOPIC, queueId: 0, commitOffset: 1 }, undefined, 26, /^Group G@x not exist!/],
    ];
    for (const [name, code, ext, body, want, remark] of cases) {
      const h = await call(code, ext, body);
      assert.equal(h.code, want, `${name}: ${h.code} ${h.remark}`);
      assert.match(h.remark ?? '', remark, name);
    }
    await stillServes('admin attacks');
  });

  it('the nameserver refuses garbage and wrong-CRC registrations and keeps the real route', async () => {
    const ns = broker.namesrvAddr;
    const reg = { brokerName: 'evil', brokerAddr: '10.0.0.1:1', clusterName: 'C', haServerAddr: '', brokerId: 0, compressed: false, bodyCrc32: 0 };
    const garbage = await rawInvoke(ns, { code: 103, extFields: reg, body: Buffer.from('{{{garbage') });
    assert.equal(garbage.header.code, 1);
    assert.match(garbage.header.remark ?? '', /^register broker body is not valid JSON/);
    const crc = await rawInvoke(ns, { code: 103, extFields: { ...reg, bodyCrc32: 12345 }, body: Buffer.from('{"topicConfigSerializeWrapper":{"topicConfigTable":{}}}') });
    assert.deepEqual([crc.header.code, crc.header.remark], [1, 'crc32 not match']);
    const route = await rawInvoke(ns, { code: 105, extFields: { topic: TOPIC } });
    assert.equal(route.header.code, 0);
    const body = JSON.parse(route.body.toString()) as { brokerDatas: Array<{ brokerName: string }> };
    assert.deepEqual(body.brokerDatas.map((b) => b.brokerName), ['broker-a']);
  });

  it('5,000 connections opened and dropped at once', async () => {
    for (let wave = 0; wave < 10; wave++) {
      await Promise.all(
        Array.from({ length: 500 }, () => new Promise<void>((resolve) => {
          const s = connect(broker.listenPort, '127.0.0.1');
          s.on('connect', () => s.destroy());
          s.on('close', () => resolve());
          s.on('error', () => resolve());
        })),
      );
    }
    await stillServes('5,000 connections');
  });

  it('every message ali-ons got SEND_OK for was consumed by the group', async () => {
    await new Promise((r) => setTimeout(r, 500));
    producing = false;
    await producerLoop;
    assert.ok(acked.size >= 50, `the producer kept sending during the attacks (${acked.size} acknowledged; errors: ${sendErrors.slice(0, 3).join('; ')})`);
    await waitUntil(() => [...acked].every((b) => received.has(b)), 60_000, () => `consumed ${[...acked].filter((b) => received.has(b)).length}/${acked.size}`);
    assert.equal(broker.child.exitCode, null);
  });
});
