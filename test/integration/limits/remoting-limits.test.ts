/**
 * Remoting transport limits against one real broker (real store, real sockets), configured by
 * its broker.conf keys: partial-frame budget, frame read timeout (trickle), connection limit,
 * rate-limited bad-frame logging. After each attack a normal SEND_MESSAGE_V2 must succeed.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { setTimeout as sleep } from 'node:timers/promises';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { CaptureLogger } from '../../support/capture-logger.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MiB = 1024 * 1024;
const BUDGET_BYTES = 32 * MiB;
const FRAME_READ_TIMEOUT_MS = 1500;
const MAX_CONNECTIONS = 64;

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => resolve(s));
    s.once('error', reject);
  });
}

/** Resolves with the ms from now until the socket closes (rejects after limitMs). */
function closedWithin(s: net.Socket, limitMs: number): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    if (s.destroyed) return resolve(0);
    const timer = setTimeout(() => reject(new Error(`socket still open after ${limitMs} ms`)), limitMs);
    s.on('error', () => undefined);
    s.once('close', () => {
      clearTimeout(timer);
      resolve(performance.now() - t0);
    });
  });
}

function arrayBufferBytes(): number {
  gc();
  gc();
  return process.memoryUsage().arrayBuffers;
}

describe('remoting limits on a real broker', { timeout: 120_000 }, () => {
  let dir: string;
  let broker: BrokerController;
  let client: RemotingClient;
  const log = new CaptureLogger();
  let addr: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsmq-limits-'));
    broker = await BrokerController.create({
      logger: log,
      brokerConfig: {
        storePathRootDir: dir,
        listenPort: '0',
        namesrvAddr: '',
        mappedFileSizeCommitLog: String(1024 * 1024),
        flushConsumerOffsetInterval: '100000',
        serverPartialFrameBudgetBytes: String(BUDGET_BYTES),
        serverFrameReadTimeoutMs: String(FRAME_READ_TIMEOUT_MS),
        serverMaxConnections: String(MAX_CONNECTIONS),
      },
    });
    await broker.start();
    addr = `127.0.0.1:${broker.port}`;
    client = new RemotingClient({ logger: silentLogger });
  });

  after(async () => {
    await client.close();
    await broker.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  const assertNormalSendWorks = async (body: string): Promise<void> => {
    const r = await client.invokeSync(
      addr,
      createRequestCommand(RequestCode.SEND_MESSAGE_V2, { a: 'P', b: 'LimitsTopic', c: 'TBW102', d: 4, e: 0, f: 0, g: Date.now(), h: 0, i: '', j: 0, k: false }, Buffer.from(body)),
      5000,
    );
    assert.equal(r.code, ResponseCode.SUCCESS, `normal send after the attack: ${r.remark}`);
  };

  it('40 unfinished 16 MiB frames: held bytes stay within the budget, the extra connections are closed, all memory returns on close', async (t) => {
    await assertNormalSendWorks('before');
    const baseline = arrayBufferBytes();
    const prefix = Buffer.alloc(8);
    prefix.writeInt32BE(16 * MiB - 4, 0); // the largest legal frame
    prefix.writeInt32BE(64, 4);
    const piece = Buffer.alloc(2 * MiB, 0x41); // one buffer written by every socket (not copied)
    const sockets: net.Socket[] = [];
    const closedByServer: boolean[] = [];
    for (let i = 0; i < 40; i++) {
      const s = await connect(broker.port);
      const idx = sockets.push(s) - 1;
      closedByServer[idx] = false;
      s.on('error', () => undefined);
      s.on('close', () => { closedByServer[idx] = true; });
      s.write(prefix);
      s.write(piece);
    }
    await sleep(500); // less than the frame read timeout: the held frames are still open
    const held = arrayBufferBytes() - baseline;
    const refused = closedByServer.filter(Boolean).length;
    // 32 MiB budget / 2 MiB each: 16 connections fit (the last one may be cut partly), the others are closed
    assert.ok(refused >= 40 - 17, `connections closed for the budget: ${refused}`);
    assert.ok(held < BUDGET_BYTES + 8 * MiB, `array buffers held during the attack: ${(held / MiB).toFixed(1)} MiB`);
    t.diagnostic(`held ${(held / MiB).toFixed(1)} MiB with ${40 - refused} connections open, ${refused} closed; rss ${(process.memoryUsage().rss / MiB).toFixed(0)} MiB`);
    const budgetLines = log.matching('warn', 'server-wide budget for unfinished frames');
    assert.ok(budgetLines.length >= 1 && budgetLines.length <= 2, `budget warnings: ${budgetLines.length}`);
    for (const s of sockets) s.destroy();
    await sleep(200);
    const after = arrayBufferBytes() - baseline;
    assert.ok(after < 4 * MiB, `array buffers after close: ${(after / MiB).toFixed(1)} MiB above the baseline`);
    t.diagnostic(`after close: ${(after / MiB).toFixed(1)} MiB above the baseline; rss ${(process.memoryUsage().rss / MiB).toFixed(0)} MiB`);
    await assertNormalSendWorks('after partial frames');
  });

  it('a 1 byte/s trickle is closed once its frame is older than serverFrameReadTimeoutMs', async () => {
    const s = await connect(broker.port);
    const frame = Buffer.alloc(200);
    frame.writeInt32BE(196, 0);
    let i = 0;
    const timer = setInterval(() => { if (!s.destroyed) s.write(frame.subarray(i, ++i)); }, 50); // 20 bytes/s, every byte "resets" an idle timer
    try {
      const ms = await closedWithin(s, 5000);
      assert.ok(ms >= FRAME_READ_TIMEOUT_MS - 100 && ms < FRAME_READ_TIMEOUT_MS + 1000, `closed after ${ms.toFixed(0)} ms`);
    } finally {
      clearInterval(timer);
    }
    assert.ok(log.matching('warn', `is still incomplete (serverFrameReadTimeoutMs=${FRAME_READ_TIMEOUT_MS})`).length >= 1);
    await assertNormalSendWorks('after trickle');
  });

  it('a peer that sends only a frame length field (one byte per interval) and then nothing is closed after serverFrameReadTimeoutMs, counted from the first byte', async () => {
    // before: the clock restarted when the 4-byte length completed (no byte buffered), so a
    // peer could trickle the length and then hold the connection until the idle timeout (120 s)
    const s = await connect(broker.port);
    const length = Buffer.alloc(4);
    length.writeInt32BE(196, 0);
    let i = 0;
    const timer = setInterval(() => { if (!s.destroyed && i < 4) s.write(length.subarray(i, ++i)); }, 200);
    try {
      const ms = await closedWithin(s, 6000);
      assert.ok(ms >= FRAME_READ_TIMEOUT_MS - 100 && ms < FRAME_READ_TIMEOUT_MS + 1000, `closed after ${ms.toFixed(0)} ms`);
    } finally {
      clearInterval(timer);
    }
    await assertNormalSendWorks('after a bare length field');
  });

  it('connections above serverMaxConnections are refused with one clear warning', async () => {
    const open: net.Socket[] = [];
    try {
      // the test client holds one connection already
      for (let i = 0; i < MAX_CONNECTIONS - 1; i++) open.push(await connect(broker.port));
      await sleep(100);
      const extra = await Promise.all([0, 1, 2].map(() => connect(broker.port)));
      for (const s of extra) await closedWithin(s, 2000);
      const lines = log.matching('warn', `serverMaxConnections=${MAX_CONNECTIONS}`);
      assert.equal(lines.length, 1, lines.join('\n'));
      assert.match(lines[0]!, /refusing connection from 127\.0\.0\.1:\d+: 64 connections are open/);
    } finally {
      for (const s of open) s.destroy();
    }
    await sleep(200);
    await assertNormalSendWorks('after connection flood');
  });

  it('a topic of 1,000,000 queues is refused with a clear remark; 4096 queues are accepted', async () => {
    const update = (topic: string, queues: number) => client.invokeSync(addr,
      createRequestCommand(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic, readQueueNums: queues, writeQueueNums: queues, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false }), 5000);
    const t0 = performance.now();
    const r = await update('HugeTopic', 1_000_000);
    assert.ok(performance.now() - t0 < 1000);
    assert.equal(r.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(r.remark, 'topic HugeTopic: 1000000 queues requested (readQueueNums=1000000, writeQueueNums=1000000), the broker allows at most 4096 per topic (maxTopicQueueNums)');
    assert.equal(broker.ctx.topicConfigManager.selectTopicConfig('HugeTopic'), undefined);
    const ok = await update('BigTopic', 4096);
    assert.equal(ok.code, ResponseCode.SUCCESS, ok.remark ?? '');
    assert.equal(broker.ctx.topicConfigManager.selectTopicConfig('BigTopic')?.writeQueueNums, 4096);
    await assertNormalSendWorks('after the huge topic');
  });

  it('a subscription group with retryQueueNums 10^9 is refused (its retry topic would get that many queues); one already in the table gets a retry topic of at most maxTopicQueueNums queues', async () => {
    // before: accepted, and the next heartbeat created %RETRY%HugeG with 10^9 queues, after which
    // topic stats of it blocked the broker's event loop for hours (~26 us per queue)
    const update = (group: object) => client.invokeSync(addr, createRequestCommand(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, null, Buffer.from(JSON.stringify(group))), 5000);
    const huge = await update({ groupName: 'HugeG', retryQueueNums: 1_000_000_000 });
    assert.equal(huge.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(huge.remark, 'group HugeG: retryQueueNums 1000000000 is not within 0..4096; its retry topic %RETRY%HugeG gets that many queues and the broker allows at most 4096 per topic (maxTopicQueueNums)');
    assert.equal(broker.ctx.subscriptionGroupManager.get('HugeG'), undefined);
    const negative = await update({ groupName: 'NegG', retryQueueNums: -1 });
    assert.equal(negative.code, ResponseCode.SYSTEM_ERROR);
    const list = await client.invokeSync(addr, createRequestCommand(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST, null, Buffer.from(JSON.stringify({ groupConfigList: [{ groupName: 'OkG' }, { groupName: 'HugeG2', retryQueueNums: 5000 }] }))), 5000);
    assert.equal(list.code, ResponseCode.SYSTEM_ERROR);
    assert.match(list.remark ?? '', /^group HugeG2: retryQueueNums 5000 is not within 0\.\.4096; .*\(no group of the list was changed\)$/);
    assert.equal(broker.ctx.subscriptionGroupManager.get('OkG'), undefined);
    // a group that holds such a value already (an old subscriptionGroup.json): its retry topic is clamped
    broker.ctx.subscriptionGroupManager.updateSubscriptionGroupConfig({ ...broker.ctx.subscriptionGroupManager.decodeGroup({ groupName: 'OldHugeG' }, ''), retryQueueNums: 1_000_000_000 });
    const hb = await client.invokeSync(addr, createRequestCommand(RequestCode.HEART_BEAT, null, Buffer.from(JSON.stringify({
      clientID: 'c-huge', producerDataSet: [],
      consumerDataSet: [{ groupName: 'OldHugeG', consumeType: 'CONSUME_PASSIVELY', messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET', unitMode: false,
        subscriptionDataSet: [{ topic: 'LimitsTopic', subString: '*', expressionType: 'TAG', tagsSet: [], codeSet: [], subVersion: 1 }] }],
    }))), 5000);
    assert.equal(hb.code, ResponseCode.SUCCESS, hb.remark ?? '');
    assert.equal(broker.ctx.topicConfigManager.selectTopicConfig('%RETRY%OldHugeG')?.writeQueueNums, 4096);
    assert.ok(log.matching('warn', 'topic %RETRY%OldHugeG: 1000000000 queues asked for, created with maxTopicQueueNums=4096').length >= 1);
    await assertNormalSendWorks('after the huge retry group');
  });

  it('10,000 bad frames: every connection closed, a bounded number of log lines', async (t) => {
    const before = log.lines.length;
    const garbage = Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]); // length -1
    const t0 = performance.now();
    const BATCH = 50;
    for (let done = 0; done < 10_000; done += BATCH) {
      await Promise.all(Array.from({ length: BATCH }, async () => {
        const s = await connect(broker.port);
        s.write(garbage);
        await closedWithin(s, 5000);
      }));
    }
    const tookMs = performance.now() - t0;
    const lines = log.lines.slice(before).filter((l) => l.level === 'warn');
    assert.ok(lines.length >= 1 && lines.length <= 1 + Math.ceil(tookMs / 10_000), `${lines.length} warnings in ${tookMs.toFixed(0)} ms`);
    t.diagnostic(`${lines.length} warning line(s) for 10000 bad frames in ${tookMs.toFixed(0)} ms`);
    assert.match(lines[0]!.text, /closing remoting connection 127\.0\.0\.1:\d+: invalid frame length -1/);
    await assertNormalSendWorks('after bad frames');
  });
});
