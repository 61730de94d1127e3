/**
 * Crash harness for timer messages: `tsmq start` in a child process receives timer messages
 * (TIMER_DELAY_MS 200..2500 ms, SYNC_FLUSH so an acknowledged send is on disk) and is killed
 * with SIGKILL at random moments, rounds in a row, while timers are pending and being delivered.
 * Then a clean start delivers the rest, and a last phase checks clean restarts.
 *
 * Asserts: every acknowledged timer message is delivered to its topic; never before its time
 * (store time ≥ send time + delay); duplicates only from SIGKILL rounds (Apache's at-least-once:
 * the slot being delivered and deliveries since the last timer checkpoint are re-delivered),
 * counted and printed; after a clean stop/start every pending timer is delivered exactly once.
 *
 * Each round also sends a burst of BURST timers of 1 KiB due at one instant close to the kill
 * (TIMER_DELIVER_MS; the kill lands from 60 ms before to 140 ms after it): one slot's delivery is
 * then ≥ 64 KiB of back-to-back records, which the CommitLog writes straight from the prepared
 * block (CommitLog.appendPrepared → MappedFile.appendDirect), so SIGKILLs also hit that path
 * before, during and after its writes.
 *
 * Rounds: TSMQ_TIMER_CRASH_ROUNDS (default 6). Seed: TSMQ_CRASH_SEED (printed).
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

const ROUNDS = Number(process.env.TSMQ_TIMER_CRASH_ROUNDS ?? 6);
const TOPIC = 'TIMER_CRASH_T';
const PRECISION_MS = 100;
/** timers of 1 KiB due at the same instant per round (≥ 64 KiB: the direct-write path of a prepared block) */
const BURST = 160;

interface Delivered {
  key: string;
  storeTimestamp: number;
}

async function readTopic(client: LeanClient): Promise<Delivered[]> {
  const maxReply = await client.invoke(30, { topic: TOPIC, queueId: 0 });
  const max = maxReply.code === 0 ? Number(maxReply.extFields.offset) : 0;
  const out: Delivered[] = [];
  let offset = 0;
  while (offset < max) {
    const r = await client.pull('GID_TIMER_CHECK', TOPIC, 0, offset, 32);
    if (r.code !== 0) throw new Error(`pull ${TOPIC}@${offset} answered ${r.code} ${r.remark}`);
    for (let at = 0; at < r.body.length; ) {
      const m = decodeRecord(r.body, at);
      out.push({ key: m.properties.get('KEYS') ?? '', storeTimestamp: m.storeTimestamp });
      at += m.storeSize;
    }
    offset = Number(r.extFields.nextBeginOffset);
  }
  return out;
}

describe('SIGKILL crash rounds with pending timers', { timeout: 300_000 }, () => {
  it(`${ROUNDS} kill/restart rounds: every acknowledged timer delivered, never early; clean restarts exactly once`, async () => {
    const seed = seedFromEnv('TSMQ_CRASH_SEED');
    console.log(`# timer crash harness seed=${seed} rounds=${ROUNDS}`);
    const rnd = mulberry32(seed);
    const storeDir = mkdtempSync(join(tmpdir(), 'tsmq-timer-crash-'));
    const namesrvPort = await freePort();
    const listenPort = await freePort();
    const options = {
      flushDiskType: 'SYNC_FLUSH',
      mappedFileSizeCommitLog: String(1024 * 1024),
      timerPrecisionMs: String(PRECISION_MS),
      timerFlushIntervalMs: '200',
      mappedFileSizeTimerLog: String(52 * 200 + 16),
    };
    /** key → earliest allowed delivery (client time before the send + delay). */
    const acked = new Map<string, number>();
    let broker: TsmqProcess | null = null;
    try {
      for (let round = 0; round < ROUNDS; round++) {
        broker = await TsmqProcess.start({ storeDir, namesrvPort, listenPort, options });
        const client = new LeanClient(broker.brokerAddr);
        await client.ready;
        const killAfterMs = 300 + Math.floor(rnd() * 1200);
        const roundStart = Date.now();
        let n = 0;
        let stop = false;
        // the burst: due killAfterMs - 140 .. killAfterMs + 60 after the round starts
        const burstAt = roundStart + killAfterMs - 140 + Math.floor(rnd() * 200);
        let b = 0;
        const burst = Array.from({ length: 8 }, async () => {
          while (!stop && b < BURST) {
            const key = `r${round}-b${b++}`;
            try {
              const r = await client.send(TOPIC, 0, Buffer.alloc(1024, key), { KEYS: key, TIMER_DELIVER_MS: String(burstAt) });
              if (r.code === 0) acked.set(key, burstAt);
            } catch {
              return; // killed
            }
          }
        });
        const producers = Array.from({ length: 4 }, async () => {
          while (!stop) {
            const key = `r${round}-${n++}`;
            const delayMs = 200 + Math.floor(rnd() * 2300);
            const sentAt = Date.now();
            try {
              const r = await client.send(TOPIC, 0, Buffer.alloc(100, key), { KEYS: key, TIMER_DELAY_MS: String(delayMs) });
              if (r.code === 0) acked.set(key, sentAt + delayMs);
            } catch {
              return; // killed
            }
          }
        });
        await new Promise((r) => setTimeout(r, killAfterMs));
        await broker.kill();
        stop = true;
        await Promise.all([...producers, ...burst]);
        client.close();
      }
      // Clean start: everything pending comes due.
      broker = await TsmqProcess.start({ storeDir, namesrvPort, listenPort, options });
      let client = new LeanClient(broker.brokerAddr);
      await client.ready;
      const lastDue = Math.max(...acked.values());
      await new Promise((r) => setTimeout(r, Math.max(0, lastDue - Date.now()) + 1500));
      const delivered = await readTopic(client);
      const copies = new Map<string, number>();
      for (const d of delivered) {
        copies.set(d.key, (copies.get(d.key) ?? 0) + 1);
        const earliest = acked.get(d.key);
        if (earliest !== undefined) assert.ok(d.storeTimestamp >= earliest, `seed ${seed}: ${d.key} delivered ${earliest - d.storeTimestamp} ms early`);
      }
      const missing = [...acked.keys()].filter((k) => !copies.has(k));
      assert.deepEqual(missing, [], `seed ${seed}: acknowledged timers never delivered`);
      const duplicates = [...copies.values()].reduce((a, c) => a + c - 1, 0);
      console.log(`# timer crash harness: ${acked.size} acknowledged timers, ${delivered.length} deliveries, ${duplicates} duplicates after ${ROUNDS} SIGKILLs`);

      // Clean restarts: pending timers are delivered exactly once.
      const before = delivered.length;
      const clean = new Map<string, number>();
      for (let i = 0; i < 40; i++) {
        const key = `clean-${i}`;
        const sentAt = Date.now();
        const r = await client.send(TOPIC, 0, Buffer.from(key), { KEYS: key, TIMER_DELAY_MS: String(1500 + (i % 5) * 100) });
        assert.equal(r.code, 0, r.remark ?? "");
        clean.set(key, sentAt + 1500 + (i % 5) * 100);
      }
      await new Promise((r) => setTimeout(r, 400));
      client.close();
      assert.equal(await broker.stop(), 0, broker.log);
      broker = await TsmqProcess.start({ storeDir, namesrvPort, listenPort, options });
      client = new LeanClient(broker.brokerAddr);
      await client.ready;
      await new Promise((r) => setTimeout(r, Math.max(0, Math.max(...clean.values()) - Date.now()) + 1500));
      const after = (await readTopic(client)).slice(before);
      client.close();
      const afterKeys = after.map((d) => d.key).sort();
      assert.deepEqual(afterKeys, [...clean.keys()].sort(), `seed ${seed}: after a clean restart every timer exactly once`);
      for (const d of after) assert.ok(d.storeTimestamp >= clean.get(d.key)!, `${d.key} early`);
      assert.equal(await broker.stop(), 0, broker.log);
      broker = null;
    } finally {
      await broker?.kill();
      rmSync(storeDir, { recursive: true, force: true });
    }
  });
});
