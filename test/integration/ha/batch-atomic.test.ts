/**
 * Batches are atomic over the wire (issue 13). SEND_BATCH_MESSAGE (320) requests and single
 * sends (310) are pipelined, without waiting for answers, on one and on many connections to the
 * same topic and queue — what a multi-threaded Java producer does — against `tsmq broker`
 * children (test/support/ha-cluster.ts):
 *
 *   - an ASYNC_MASTER with ASYNC_FLUSH and 256 KiB CommitLog segments (batches meet segment ends);
 *   - a SYNC_MASTER with SYNC_FLUSH and a SLAVE attached.
 *
 * For every acknowledged batch (Apache's answer: msgId = the records' offset msgIds comma-joined,
 * queueOffset = the first message's): on disk, its messages have consecutive queue offsets from
 * the answered queueOffset, each record starts exactly where the previous one ends (the offsets
 * in msgId), all carry one store timestamp, and the block lies within one segment; a pull of the
 * queue finds the batch's messages at exactly those queue offsets. The slave's CommitLog equals
 * the master's byte for byte.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { createTopic, firstCommitLogDifference, HaCluster, readCommitLog, storeOffsets, waitUntil } from '../../support/ha-cluster.js';
import { LeanClient } from '../../support/lean-client.js';

const SEGMENT = 256 * 1024;
const BATCH = 10;

/** A batch body as a client encodes it (MessageDecoder.encodeMessages: MAGIC and BODYCRC 0), written here independently of src. */
function batchBody(items: { body: Buffer; props: Record<string, string> }[]): Buffer {
  const parts = items.map(({ body, props }) => {
    const p = Buffer.from(Object.entries(props).map(([k, v]) => `${k}\u0001${v}\u0002`).join(''), 'utf8');
    const total = 22 + body.length + p.length;
    const b = Buffer.alloc(total);
    b.writeInt32BE(total, 0);
    b.writeInt32BE(body.length, 16);
    body.copy(b, 20);
    b.writeInt16BE(p.length, 20 + body.length);
    p.copy(b, 22 + body.length);
    return b;
  });
  return Buffer.concat(parts);
}

/** Physical offset in an IPv4 offset msgId (ip 8 hex, port 8 hex, offset 16 hex). */
function offsetOfMsgId(msgId: string): number {
  assert.match(msgId, /^[0-9A-F]{32}$/);
  return Number(BigInt(`0x${msgId.slice(16)}`));
}

interface AckedBatch {
  keys: string[];
  queueId: number;
  queueOffset: number;
  offsets: number[];
}

interface AckedSingle {
  key: string;
  queueOffset: number;
  offset: number;
}

interface Load {
  batches: AckedBatch[];
  singles: AckedSingle[];
  codes: Record<string, number>;
}

/**
 * On each of `connections` sockets, fires `batches` batches of BATCH and `singles` single sends
 * (interleaved) to `topic`/`queueId` without waiting, then collects the answers.
 */
async function pipelined(addr: string, topic: string, queueId: number, tag: string, connections: number, batches: number, singles: number): Promise<Load> {
  const load: Load = { batches: [], singles: [], codes: {} };
  const body = Buffer.alloc(200, 'batch-atomic-');
  const ext = (props: string) => ({ a: 'PID_BATCH', b: topic, c: 'TBW102', d: 4, e: queueId, f: 0, g: Date.now(), h: 0, i: props, j: 0, k: false });
  await Promise.all(
    Array.from({ length: connections }, async (_, c) => {
      const client = new LeanClient(addr);
      await client.ready;
      const pending: Promise<void>[] = [];
      for (let n = 0; n < Math.max(batches, singles); n++) {
        if (n < batches) {
          const keys = Array.from({ length: BATCH }, (_, i) => `${tag}-c${c}-b${n}-${i}`);
          const req = client.invoke(320, ext('WAIT\u0001true\u0002'), batchBody(keys.map((k) => ({ body, props: { KEYS: k, TAGS: 'B' } }))));
          pending.push(
            req.then((r) => {
              load.codes[r.code] = (load.codes[r.code] ?? 0) + 1;
              if (r.code !== 0) return;
              const ids = r.extFields.msgId!.split(',');
              assert.equal(ids.length, BATCH, 'one msgId per message');
              load.batches.push({ keys, queueId: Number(r.extFields.queueId), queueOffset: Number(r.extFields.queueOffset), offsets: ids.map(offsetOfMsgId) });
            }),
          );
        }
        if (n < singles) {
          const key = `${tag}-c${c}-s${n}`;
          pending.push(
            client.send(topic, queueId, body, { KEYS: key, WAIT: 'true' }).then((r) => {
              load.codes[r.code] = (load.codes[r.code] ?? 0) + 1;
              if (r.code === 0) load.singles.push({ key, queueOffset: Number(r.extFields.queueOffset), offset: offsetOfMsgId(r.extFields.msgId!) });
            }),
          );
        }
      }
      await Promise.all(pending);
      client.close();
    }),
  );
  return load;
}

/** Queue offset → KEYS of every message of the queue, pulled 32 at a time from 0. */
async function pullAll(addr: string, topic: string, queueId: number): Promise<Map<number, string>> {
  const client = new LeanClient(addr);
  await client.ready;
  const out = new Map<number, string>();
  try {
    let offset = 0;
    for (;;) {
      const r = await client.pull('GID_BATCH_CHECK', topic, queueId, offset, 32);
      if (r.code !== 0) break; // 19 PULL_NOT_FOUND / 20 PULL_RETRY_IMMEDIATELY at the end
      for (let at = 0; at < r.body.length; ) {
        const m = decodeRecord(r.body, at);
        out.set(m.queueOffset, m.properties.get('KEYS')!);
        at += r.body.readInt32BE(at);
      }
      const next = Number(r.extFields.nextBeginOffset);
      if (next <= offset) break;
      offset = next;
    }
  } finally {
    client.close();
  }
  return out;
}

/** The disk checks of the file comment, on the stopped broker's store. */
function checkOnDisk(storeDir: string, load: Load, topic: string, queueId: number): void {
  for (const b of load.batches) {
    assert.equal(b.queueId, queueId);
    let storeTimestamp = -1;
    for (let i = 0; i < BATCH; i++) {
      const at = b.offsets[i]!;
      const head = readCommitLog(storeDir, at, at + 4);
      const m = decodeRecord(readCommitLog(storeDir, at, at + head.readInt32BE(0)));
      const where = `${b.keys[i]} at ${at}`;
      assert.equal(m.properties.get('KEYS'), b.keys[i], where);
      assert.equal(m.topic, topic, where);
      assert.equal(m.queueId, queueId, where);
      assert.equal(m.commitLogOffset, at, where);
      assert.equal(m.queueOffset, b.queueOffset + i, `${where}: consecutive queue offsets from the answered ${b.queueOffset}`);
      if (i === 0) storeTimestamp = m.storeTimestamp;
      else assert.equal(m.storeTimestamp, storeTimestamp, `${where}: one store time per batch`);
      if (i + 1 < BATCH) assert.equal(b.offsets[i + 1], at + m.storeSize, `${where}: the next record follows this one exactly`);
    }
    const last = b.offsets[BATCH - 1]!;
    assert.equal(Math.floor(b.offsets[0]! / SEGMENT), Math.floor(last / SEGMENT), `${b.keys[0]}: the batch lies in one segment`);
  }
  for (const s of load.singles) {
    const head = readCommitLog(storeDir, s.offset, s.offset + 4);
    const m = decodeRecord(readCommitLog(storeDir, s.offset, s.offset + head.readInt32BE(0)));
    assert.equal(m.properties.get('KEYS'), s.key);
    assert.equal(m.queueOffset, s.queueOffset);
  }
}

/** A pull of the queue finds every batch's messages at the answered queue offsets, and nothing else. */
function checkPulled(byOffset: Map<number, string>, load: Load): void {
  for (const b of load.batches) {
    for (let i = 0; i < BATCH; i++) assert.equal(byOffset.get(b.queueOffset + i), b.keys[i], `queue offset ${b.queueOffset + i}`);
  }
  for (const s of load.singles) assert.equal(byOffset.get(s.queueOffset), s.key);
  assert.equal(byOffset.size, load.batches.length * BATCH + load.singles.length);
}

describe('SEND_BATCH_MESSAGE is one atomic append', { timeout: 180_000 }, () => {
  let cluster: HaCluster;

  before(async () => {
    cluster = await HaCluster.start();
  });

  after(async () => {
    await cluster?.close();
  });

  it('ASYNC_FLUSH: pipelined batches and singles on one and on 8 connections are stored as contiguous blocks', async () => {
    const conf = { mappedFileSizeCommitLog: String(SEGMENT), flushDiskType: 'ASYNC_FLUSH' };
    await cluster.startBroker({ name: 'async', brokerName: 'broker-async', brokerId: 0, brokerRole: 'ASYNC_MASTER', conf });
    const addr = cluster.addr('async');
    const topic = 'BatchAtomic';
    await createTopic(addr, topic, 2);

    // the report's case first: two batches of 10 on one connection, the second sent before the first is answered
    const two = await pipelined(addr, topic, 1, 'two', 1, 2, 0);
    assert.deepEqual(two.codes, { 0: 2 });
    assert.deepEqual(two.batches.map((b) => b.queueOffset).sort((x, y) => x - y), [0, BATCH]);

    const [one, many] = await Promise.all([pipelined(addr, topic, 0, 'one', 1, 50, 50), pipelined(addr, topic, 0, 'many', 8, 50, 20)]);
    const all: Load = { batches: [...one.batches, ...many.batches], singles: [...one.singles, ...many.singles], codes: {} };
    assert.deepEqual(one.codes, { 0: 100 });
    assert.deepEqual(many.codes, { 0: 8 * 50 + 8 * 20 });
    assert.equal(all.batches.length, 450);
    const pulled = await pullAll(addr, topic, 0);
    checkPulled(pulled, all);
    checkPulled(await pullAll(addr, topic, 1), two);

    await cluster.stop('async');
    const store = cluster.broker('async').storeDir;
    checkOnDisk(store, all, topic, 0);
    checkOnDisk(store, two, topic, 1);
    // the load crossed several segment ends (where a batch would have been split)
    assert.ok((await storeOffsets(store, conf)).max > 3 * SEGMENT);
  });

  it('SYNC_FLUSH on a SYNC_MASTER with a slave: contiguous blocks, answered SUCCESS, replicated byte for byte', async () => {
    const conf = { mappedFileSizeCommitLog: String(SEGMENT), flushDiskType: 'SYNC_FLUSH' };
    await cluster.startBroker({ name: 'master', brokerName: 'broker-sync', brokerId: 0, brokerRole: 'SYNC_MASTER', conf });
    await cluster.startBroker({ name: 'slave', brokerName: 'broker-sync', brokerId: 1, brokerRole: 'SLAVE', conf });
    const addr = cluster.addr('master');
    const topic = 'BatchAtomicHa';
    await createTopic(addr, topic, 1);
    // a SYNC_MASTER answers SLAVE_NOT_AVAILABLE (11) until the slave has connected (the message is stored all the same)
    await waitUntil(
      async () => {
        const probe = new LeanClient(addr);
        try {
          await probe.ready;
          return (await probe.send(topic, 0, Buffer.from('probe'), { KEYS: 'probe' })).code === 0;
        } finally {
          probe.close();
        }
      },
      30_000,
      () => `the slave did not attach\n${cluster.logs()}`,
    );

    const load = await pipelined(addr, topic, 0, 'ha', 4, 25, 10);
    assert.deepEqual(load.codes, { 0: 4 * 25 + 4 * 10 });
    const pulled = await pullAll(addr, topic, 0);
    // the probes (stored also while answered SLAVE_NOT_AVAILABLE) come before the load
    for (const [offset, key] of pulled) if (key === 'probe') pulled.delete(offset);
    checkPulled(pulled, load);

    await cluster.stop('master');
    await cluster.stop('slave');
    const m = cluster.broker('master').storeDir;
    const s = cluster.broker('slave').storeDir;
    checkOnDisk(m, load, topic, 0);
    const range = await storeOffsets(m, conf);
    assert.deepEqual(await storeOffsets(s, conf), range);
    assert.equal(firstCommitLogDifference(m, s, range.min, range.max), -1);
  });
});
