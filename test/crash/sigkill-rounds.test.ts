/**
 * Crash harness: `tsmq start` in a child process is killed with SIGKILL at random moments
 * while producers send, then restarted on the same store, many rounds in a row.
 *
 * Both flush modes: every acknowledged message is present after restart, exactly once, at the
 * queue offset it was acknowledged with, each queue is a gap-free prefix, and the broker accepts
 * new messages right after restart. A SIGKILL keeps the page cache, so under ASYNC_FLUSH too
 * nothing acknowledged may be lost (Apache appends into the mapped page cache before it answers;
 * tsmq commits its write buffer with pwrite before it answers). Only a power loss may take
 * ASYNC_FLUSH's unflushed tail (test/sim).
 * At the end the store is stopped cleanly and checked byte by byte (CommitLog ↔ ConsumeQueue).
 *
 * Rounds: TSMQ_CRASH_ROUNDS (default 30 per mode). Seed: TSMQ_CRASH_SEED (printed).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess, freePort } from '../support/tsmq-process.js';
import { LeanClient } from '../support/lean-client.js';
import { mulberry32, seedFromEnv } from '../support/prng.js';
import { decodeRecord } from '../../src/common/message/record-codec.js';
import { verifyStoreOnDisk } from '../support/store-verifier.js';

const ROUNDS = Number(process.env.TSMQ_CRASH_ROUNDS ?? 30);
const TOPIC = 'CRASH_T';
const QUEUES = 4;
const CL_FILE = 64 * 1024;
const CQ_FILE = 50 * 20;

interface Acked {
  queueId: number;
  queueOffset: number;
}

async function readAll(client: LeanClient): Promise<Map<number, Array<{ key: string; queueOffset: number }>>> {
  const out = new Map<number, Array<{ key: string; queueOffset: number }>>();
  for (let q = 0; q < QUEUES; q++) {
    const maxReply = await client.invoke(30, { topic: TOPIC, queueId: q });
    const max = maxReply.code === 0 ? Number(maxReply.extFields.offset) : 0;
    const list: Array<{ key: string; queueOffset: number }> = [];
    let offset = 0;
    while (offset < max) {
      const r = await client.pull('GID_CRASH_CHECK', TOPIC, q, offset, 32);
      if (r.code !== 0) throw new Error(`pull ${TOPIC}/${q}@${offset} answered ${r.code} ${r.remark} (max ${max})`);
      let at = 0;
      while (at < r.body.length) {
        const m = decodeRecord(r.body, at);
        list.push({ key: m.properties.get('KEYS') ?? '', queueOffset: m.queueOffset });
        at += m.storeSize;
      }
      offset = Number(r.extFields.nextBeginOffset);
    }
    out.set(q, list);
  }
  return out;
}

for (const flushDiskType of ['SYNC_FLUSH', 'ASYNC_FLUSH'] as const) {
  describe(`SIGKILL crash rounds, ${flushDiskType}`, { timeout: 900_000 }, () => {
    it(`${ROUNDS} kill/restart rounds keep every guarantee`, async () => {
      const seed = seedFromEnv('TSMQ_CRASH_SEED');
      console.log(`# crash harness ${flushDiskType} seed=${seed} rounds=${ROUNDS}`);
      const rnd = mulberry32(seed);
      const storeDir = mkdtempSync(join(tmpdir(), `tsmq-crash-${flushDiskType}-`));
      const namesrvPort = await freePort();
      const listenPort = await freePort();
      const options = {
        flushDiskType,
        mappedFileSizeCommitLog: String(CL_FILE),
        mappedFileSizeConsumeQueue: String(CQ_FILE),
        flushIntervalCommitLog: '50',
      };
      const acked = new Map<string, Acked>();
      let totalAcked = 0;
      let broker: TsmqProcess | null = null;
      try {
        for (let round = 0; round < ROUNDS; round++) {
          broker = await TsmqProcess.start({ storeDir, namesrvPort, listenPort, options });
          const client = new LeanClient(broker.brokerAddr);
          await client.ready;
          // 1. What survived the previous crash.
          const present = await readAll(client);
          const seen = new Set<string>();
          for (const [q, list] of present) {
            list.forEach((m, i) => {
              assert.equal(m.queueOffset, i, `seed ${seed} round ${round}: queue ${q} offsets are a gap-free prefix`);
              assert.ok(!seen.has(m.key), `seed ${seed} round ${round}: ${m.key} stored twice`);
              seen.add(m.key);
            });
          }
          for (const [key, a] of acked) {
            const list = present.get(a.queueId)!;
            assert.equal(list[a.queueOffset]?.key, key, `seed ${seed} round ${round} (${flushDiskType}): acknowledged ${key} at ${a.queueId}/${a.queueOffset}`);
          }
          // 2. Accepts new messages right away.
          const first = await client.send(TOPIC, 0, Buffer.from('after-restart'), { KEYS: `r${round}-first` });
          assert.equal(first.code, 0, `seed ${seed} round ${round}: send after restart: ${first.remark}`);
          acked.set(`r${round}-first`, { queueId: 0, queueOffset: Number(first.extFields.queueOffset) });
          // 3. Producers send until the kill.
          const killAfterMs = 100 + Math.floor(rnd() * 900);
          let n = 0;
          let stop = false;
          const producers = Array.from({ length: 8 }, async () => {
            while (!stop) {
              const key = `r${round}-${n++}`;
              const q = Math.floor(rnd() * QUEUES);
              const body = Buffer.alloc(50 + Math.floor(rnd() * 2000), key);
              try {
                const r = await client.send(TOPIC, q, body, { KEYS: key });
                if (r.code === 0) {
                  acked.set(key, { queueId: Number(r.extFields.queueId), queueOffset: Number(r.extFields.queueOffset) });
                  totalAcked++;
                }
              } catch {
                return; // connection gone: the broker was killed
              }
            }
          });
          await new Promise((r) => setTimeout(r, killAfterMs));
          await broker.kill();
          stop = true;
          await Promise.all(producers);
          client.close();
        }
        // Final clean start/stop and byte-level verification.
        broker = await TsmqProcess.start({ storeDir, namesrvPort, listenPort, options });
        const client = new LeanClient(broker.brokerAddr);
        await client.ready;
        const present = await readAll(client);
        client.close();
        assert.equal(await broker.stop(), 0, broker.log);
        broker = null;
        const total = [...present.values()].reduce((a, l) => a + l.length, 0);
        const report = await verifyStoreOnDisk(storeDir, { mappedFileSizeCommitLog: CL_FILE, mappedFileSizeConsumeQueue: CQ_FILE });
        assert.equal(report.queues.get(TOPIC)?.reduce((a, b) => a + b, 0), total);
        assert.ok(total >= acked.size);
        console.log(`# crash harness ${flushDiskType}: ${ROUNDS} rounds, ${totalAcked} acknowledged sends, ${total} messages stored`);
      } finally {
        await broker?.kill();
        rmSync(storeDir, { recursive: true, force: true });
      }
    });
  });
}
