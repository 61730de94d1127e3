/**
 * Pull reply bodies are recycled once written (PullBodyPool via RemotingCommand.onWritten): real
 * broker, real sockets. Many pulls in flight on one connection are answered in one gathered
 * write; a body handed back before the kernel took it would be overwritten by a later pull of
 * the same batch, so every record of every reply is checked against what was sent.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { jsonFrame } from '../../support/raw-remoting.js';
import { join } from 'node:path';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { decodeRecord, readRecordTotalSize } from '../../../src/common/message/record-codec.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';

const TOPIC = 'BodyReuse';
const QUEUES = 4;
const PER_QUEUE = 160;
const BATCH = 32;
/** Body of message i of queue q: distinct bytes, 1 KiB. */
const bodyOf = (q: number, i: number): Buffer => Buffer.from(`q${q}-m${i}-`.padEnd(1024, String.fromCharCode(97 + ((q * 7 + i) % 26))));

describe('pull reply bodies recycled after the write', { timeout: 60_000 }, () => {
  let broker: BrokerController;
  let dir: string;
  let addr: string;
  const client = new RemotingClient({ logger: silentLogger });
  const call = (code: number, ext: Record<string, string | number | boolean>, body?: Buffer): Promise<RemotingCommand> =>
    client.invokeSync(addr, createRequestCommand(code, ext, body ?? null), 10_000);
  const pull = (queueId: number, offset: number): Promise<RemotingCommand> =>
    call(RequestCode.PULL_MESSAGE, {
      consumerGroup: 'GID_REUSE', topic: TOPIC, queueId, queueOffset: offset, maxMsgNums: BATCH,
      sysFlag: 4, commitOffset: 0, suspendTimeoutMillis: 0, subscription: '*', subVersion: 1, expressionType: 'TAG',
    });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsmq-body-reuse-'));
    broker = await BrokerController.create({
      brokerConfig: { storePathRootDir: dir, listenPort: '0', namesrvAddr: '', flushConsumerOffsetInterval: '100000' },
      logger: silentLogger,
    });
    await broker.start();
    addr = `127.0.0.1:${broker.port}`;
    // round robin over the queues, as single sends leave them: a queue's records interleave
    for (let i = 0; i < PER_QUEUE; i++) {
      const sent = await Promise.all(
        Array.from({ length: QUEUES }, (_, q) =>
          call(RequestCode.SEND_MESSAGE_V2, { a: 'PID_REUSE', b: TOPIC, c: 'TBW102', d: QUEUES, e: q, f: 0, g: Date.now(), h: 0, i: '', j: 0, k: false }, bodyOf(q, i)),
        ),
      );
      for (const r of sent) assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    }
  });

  after(async () => {
    await client.close();
    await broker?.shutdown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`${QUEUES} queues × ${PER_QUEUE / BATCH} pulls of ${BATCH} all in flight at once, 6 rounds: every record is the one sent at its offset, and later rounds reuse bodies`, async () => {
    const store = broker.ctx.store as DefaultMessageStore;
    for (let round = 0; round < 6; round++) {
      const asks: Array<{ q: number; offset: number }> = [];
      for (let q = 0; q < QUEUES; q++) for (let offset = 0; offset < PER_QUEUE; offset += BATCH) asks.push({ q, offset });
      const replies = await Promise.all(asks.map((a) => pull(a.q, a.offset)));
      for (let k = 0; k < asks.length; k++) {
        const { q, offset } = asks[k]!;
        const r = replies[k]!;
        assert.equal(r.code, ResponseCode.SUCCESS, `round ${round} q${q}@${offset}: ${r.remark}`);
        assert.equal(Number(r.extFields!.nextBeginOffset), offset + BATCH);
        const body = r.body!;
        let at = 0;
        for (let i = 0; i < BATCH; i++) {
          const m = decodeRecord(body, at);
          assert.equal(m.queueId, q, `round ${round} q${q}@${offset} record ${i}: queue`);
          assert.equal(m.queueOffset, offset + i, `round ${round} q${q}@${offset} record ${i}: offset`);
          assert.ok(m.body.equals(bodyOf(q, offset + i)), `round ${round} q${q}@${offset} record ${i}: body is ${m.body.subarray(0, 12).toString()}…`);
          at += readRecordTotalSize(body, at);
        }
        assert.equal(at, body.length);
      }
    }
    const stats = store.getMessageBodyPoolStats();
    // 6 rounds × 20 pulls; every reply handed its body back, and the rounds after the first were
    // served (mostly) from released bodies
    assert.ok(stats.released >= 6 * QUEUES * (PER_QUEUE / BATCH), JSON.stringify(stats));
    assert.ok(stats.reused >= 5 * QUEUES * (PER_QUEUE / BATCH) * 0.5, JSON.stringify(stats));
    assert.ok(stats.allocated <= 2 * QUEUES * (PER_QUEUE / BATCH), JSON.stringify(stats));
  });

  it('records of one queue adjacent in the CommitLog: replies are pooled bodies (no read-cache views lent: the copy measured cheaper), each handed back once written; every record is the one sent', async () => {
    const store = broker.ctx.store as DefaultMessageStore;
    const cache = store.commitLog.readCache;
    const LEND_TOPIC = 'BodyLend';
    const N = 640;
    const lendBody = (i: number): Buffer => Buffer.from(`lend-m${i}-`.padEnd(1024, String.fromCharCode(97 + (i % 26))));
    for (let i = 0; i < N; i += 64) {
      // one queue: the records are adjacent in the CommitLog in arrival order
      const sent = await Promise.all(
        Array.from({ length: 64 }, (_, k) => call(RequestCode.SEND_MESSAGE_V2, { a: 'PID_REUSE', b: LEND_TOPIC, c: 'TBW102', d: 1, e: 0, f: 0, g: Date.now(), h: 0, i: '', j: 0, k: false }, lendBody(i + k))),
      );
      for (const r of sent) assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    }
    const granted = cache.leasesGranted;
    const released = store.getMessageBodyPoolStats().released;
    const pullLend = (offset: number): Promise<RemotingCommand> =>
      call(RequestCode.PULL_MESSAGE, {
        consumerGroup: 'GID_LEND', topic: LEND_TOPIC, queueId: 0, queueOffset: offset, maxMsgNums: BATCH,
        sysFlag: 4, commitOffset: 0, suspendTimeoutMillis: 0, subscription: '*', subVersion: 1, expressionType: 'TAG',
      });
    for (let round = 0; round < 3; round++) {
      const offsets = Array.from({ length: N / BATCH }, (_, k) => k * BATCH);
      const replies = await Promise.all(offsets.map((o) => pullLend(o)));
      replies.forEach((r, k) => {
        assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
        const body = r.body!;
        let at = 0;
        for (let i = 0; i < BATCH; i++) {
          const m = decodeRecord(body, at);
          assert.equal(m.queueOffset, offsets[k]! + i);
          assert.ok(m.body.equals(lendBody(offsets[k]! + i)), `round ${round} @${offsets[k]! + i}: ${m.body.subarray(0, 12).toString()}…`);
          at += readRecordTotalSize(body, at);
        }
        assert.equal(at, body.length);
      });
    }
    assert.equal(cache.leasesGranted, granted, 'pull replies lend no read-cache views (PULL_REPLY_LEND)');
    const deadline = Date.now() + 5000;
    while (store.getMessageBodyPoolStats().released - released < 60 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(store.getMessageBodyPoolStats().released - released, 60, 'every reply body was handed back from its write callback');
    assert.equal(cache.leasesHeld, 0);
  });

  it('a client that closes its connection with 40 pull replies unread, and oneway pulls: every body lent is handed back exactly once', async () => {
    const store = broker.ctx.store as DefaultMessageStore;
    const lends = (): number => store.getMessageBodyPoolStats().allocated + store.getMessageBodyPoolStats().reused;
    const lentBefore = lends();
    const releasedBefore = store.getMessageBodyPoolStats().released;
    const frame = (opaque: number, offset: number, oneway: boolean): Buffer =>
      jsonFrame({
        code: RequestCode.PULL_MESSAGE, language: 'JAVA', version: 401, opaque, flag: oneway ? 2 : 0, serializeTypeCurrentRPC: 'JSON',
        extFields: { consumerGroup: 'GID_CLOSE', topic: TOPIC, queueId: '0', queueOffset: String(offset), maxMsgNums: String(BATCH), sysFlag: '4', commitOffset: '0', suspendTimeoutMillis: '0', subscription: '*', subVersion: '1', expressionType: 'TAG' },
      });
    const [host, port] = addr.split(':');
    const sock = connect(Number(port), host!);
    await new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject));
    sock.pause(); // read nothing
    const frames: Buffer[] = [];
    for (let k = 0; k < 40; k++) frames.push(frame(1000 + k, (k % 5) * BATCH, false));
    for (let k = 0; k < 5; k++) frames.push(frame(2000 + k, k * BATCH, true));
    sock.write(Buffer.concat(frames));
    // the broker answers all 45 (40 replies, 5 oneway results without a reply)
    const deadline = Date.now() + 5000;
    while (lends() - lentBefore < 45 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    sock.destroy();
    const settle = Date.now() + 5000;
    while (store.getMessageBodyPoolStats().released - releasedBefore < lends() - lentBefore && Date.now() < settle) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(lends() - lentBefore, 45);
    assert.equal(store.getMessageBodyPoolStats().released - releasedBefore, 45, 'each body lent came back once (none kept, none twice)');
  });
});
