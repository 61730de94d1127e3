/**
 * Crash harness for metadata created by requests (issue 19, item 1): producers send to topics
 * that the send auto-creates (from TBW102) and heartbeats register new consumer groups while
 * `tsmq start` is SIGKILLed at random moments, then restarted on the same store.
 *
 * After every kill, before the restart, the files on disk are checked: every topic of an
 * acknowledged send is in config/topics.json, every group of an answered heartbeat is in
 * config/subscriptionGroup.json and its %RETRY% topic in topics.json (the answer waited for the
 * write). After every restart every acknowledged message is pulled back from its topic at its
 * acknowledged queue offset (never 17 TOPIC_NOT_EXIST). Last, topics.json is deleted and the
 * topics come back from the ConsumeQueue directory.
 *
 * SYNC_FLUSH. Rounds: TSMQ_META_CRASH_ROUNDS (default 8). Seed: TSMQ_CRASH_SEED (printed).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess, freePort } from '../support/tsmq-process.js';
import { LeanClient } from '../support/lean-client.js';
import { mulberry32, seedFromEnv } from '../support/prng.js';
import { decodeRecord } from '../../src/common/message/record-codec.js';

const ROUNDS = Number(process.env.TSMQ_META_CRASH_ROUNDS ?? 8);

interface AckedSend {
  topic: string;
  queueId: number;
  queueOffset: number;
  key: string;
}

/**
 * The table as the broker's loader will see it: `<file>`, else `<file>.bak` (a kill between the
 * persist's two renames), else empty: a broker killed before its first write of the file (on a
 * loaded machine the first round's kill can come before any heartbeat was answered) has neither,
 * and the assertions below then judge the acknowledged names against an empty table.
 */
function configTable(storeDir: string, file: string, table: string): Record<string, unknown> {
  const primary = join(storeDir, 'config', file);
  const path = [primary, `${primary}.bak`].find((p) => existsSync(p));
  if (path === undefined) return {};
  const text = readFileSync(path, 'utf8');
  return (JSON.parse(text) as Record<string, Record<string, unknown>>)[table] ?? {};
}

function heartbeatBody(clientId: string, groups: string[]): Buffer {
  return Buffer.from(
    JSON.stringify({
      clientID: clientId,
      consumerDataSet: groups.map((g) => ({
        groupName: g,
        consumeType: 'CONSUME_PASSIVELY',
        messageModel: 'CLUSTERING',
        consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
        unitMode: false,
        subscriptionDataSet: [{ topic: 'META_T0', subString: '*', tagsSet: [], codeSet: [], subVersion: 0, classFilterMode: false }],
      })),
      producerDataSet: [],
    }),
  );
}

describe('SIGKILL crash rounds with auto-created topics and groups, SYNC_FLUSH', { timeout: 600_000 }, () => {
  it(`${ROUNDS} kill/restart rounds: acknowledged topics and groups are on disk and reachable`, async () => {
    const seed = seedFromEnv('TSMQ_CRASH_SEED');
    console.log(`# metadata crash harness seed=${seed} rounds=${ROUNDS}`);
    const rnd = mulberry32(seed);
    const storeDir = mkdtempSync(join(tmpdir(), 'tsmq-crash-meta-'));
    const namesrvPort = await freePort();
    const listenPort = await freePort();
    const options = { flushDiskType: 'SYNC_FLUSH', mappedFileSizeCommitLog: String(1024 * 1024), mappedFileSizeConsumeQueue: String(100 * 20) };
    const acked: AckedSend[] = [];
    const ackedGroups = new Set<string>();
    let broker: TsmqProcess | null = null;
    let topicSeq = 0;
    let groupSeq = 0;
    try {
      for (let round = 0; round < ROUNDS; round++) {
        broker = await TsmqProcess.start({ storeDir, namesrvPort, listenPort, options });
        const client = new LeanClient(broker.brokerAddr);
        await client.ready;
        // 1. Every acknowledged message is reachable in its (auto-created) topic.
        for (const a of acked) {
          const r = await client.pull('GID_META_CHECK', a.topic, a.queueId, a.queueOffset, 1);
          assert.equal(r.code, 0, `seed ${seed} round ${round}: pull ${a.topic}/${a.queueId}@${a.queueOffset} answered ${r.code} ${r.remark}`);
          const m = decodeRecord(r.body, 0);
          assert.equal(m.properties.get('KEYS'), a.key, `seed ${seed} round ${round}: ${a.topic}/${a.queueId}@${a.queueOffset}`);
        }
        // 2. New topics (one send each, some pipelined) and new groups until the kill.
        let stop = false;
        const producers = Array.from({ length: 6 }, async () => {
          while (!stop) {
            const topic = `META_T${topicSeq++}`;
            const key = `${topic}-k`;
            try {
              const r = await client.send(topic, -1, Buffer.from(key), { KEYS: key });
              if (r.code === 0) acked.push({ topic, key, queueId: Number(r.extFields.queueId), queueOffset: Number(r.extFields.queueOffset) });
            } catch {
              return;
            }
          }
        });
        const heartbeats = (async () => {
          while (!stop) {
            const groups = Array.from({ length: 1 + Math.floor(rnd() * 50) }, () => `GID_META_${groupSeq++}`);
            try {
              const r = await client.invoke(34, {}, heartbeatBody(`client-${round}`, groups));
              if (r.code === 0) for (const g of groups) ackedGroups.add(g);
            } catch {
              return;
            }
          }
        })();
        await new Promise((r) => setTimeout(r, 150 + Math.floor(rnd() * 600)));
        await broker.kill();
        stop = true;
        await Promise.all([...producers, heartbeats]);
        client.close();
        broker = null;
        // 3. On disk before the restart: every acknowledged topic and group.
        const topics = configTable(storeDir, 'topics.json', 'topicConfigTable');
        const groups = configTable(storeDir, 'subscriptionGroup.json', 'subscriptionGroupTable');
        for (const a of acked) assert.ok(a.topic in topics, `seed ${seed} round ${round}: acknowledged topic ${a.topic} missing from topics.json`);
        for (const g of ackedGroups) {
          assert.ok(g in groups, `seed ${seed} round ${round}: group ${g} of an answered heartbeat missing from subscriptionGroup.json`);
          assert.ok(`%RETRY%${g}` in topics, `seed ${seed} round ${round}: %RETRY%${g} missing from topics.json`);
        }
      }
      // 4. topics.json lost altogether (a store written before this fix, or an operator's
      // mistake): the topics come back from the ConsumeQueue directory and stay reachable.
      for (const f of ['topics.json', 'topics.json.bak']) rmSync(join(storeDir, 'config', f), { force: true });
      broker = await TsmqProcess.start({ storeDir, namesrvPort, listenPort, options });
      const client = new LeanClient(broker.brokerAddr);
      await client.ready;
      for (const a of acked) {
        const r = await client.pull('GID_META_CHECK', a.topic, a.queueId, a.queueOffset, 1);
        assert.equal(r.code, 0, `seed ${seed}: after losing topics.json, pull ${a.topic}/${a.queueId}@${a.queueOffset} answered ${r.code} ${r.remark}`);
      }
      client.close();
      assert.match(broker.log, /re-created \d+ topic\(s\) found in the ConsumeQueues/);
      assert.ok(acked.length > 50, `enough sends to new topics were acknowledged (${acked.length})`);
      assert.ok(ackedGroups.size > 50, `enough groups were registered (${ackedGroups.size})`);
      console.log(`# metadata crash harness: ${ROUNDS} rounds, ${acked.length} new topics acknowledged, ${ackedGroups.size} groups registered`);
    } finally {
      await broker?.kill();
      rmSync(storeDir, { recursive: true, force: true });
    }
  });
});
