/**
 * Bursts of metadata created by ordinary requests (issue 19, item 1), against `tsmq start` in a
 * child process: one HEART_BEAT registering 5,000 consumer groups, and 8,000 pipelined sends to
 * topics the sends auto-create. Before the coalesced config writer each new group or topic queued
 * one more rendered copy of the whole document: 5,000 groups ran the broker out of heap after 43 s,
 * 8,000 new topics crashed it after 45 s.
 *
 * Bounds asserted (generous for a loaded 2-core CI machine; measured values are printed): the
 * heartbeat is answered within 20 s, all 8,000 sends within 60 s, the broker's peak RSS (VmHWM)
 * stays under 1 GiB, and every group and topic is in the config files after a SIGKILL.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../support/tsmq-process.js';
import { LeanClient } from '../support/lean-client.js';

const GROUPS = 5_000;
const TOPICS = 8_000;

function peakRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmHWM:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

function table(storeDir: string, file: string, key: string): Record<string, unknown> {
  return (JSON.parse(readFileSync(join(storeDir, 'config', file), 'utf8')) as Record<string, Record<string, unknown>>)[key] ?? {};
}

describe('metadata bursts', { timeout: 240_000 }, () => {
  it(`one heartbeat with ${GROUPS} groups and ${TOPICS} sends to new topics: linear time, bounded memory, all on disk`, async () => {
    const storeDir = mkdtempSync(join(tmpdir(), 'tsmq-meta-burst-'));
    let broker: TsmqProcess | null = await TsmqProcess.start({ storeDir, options: { flushDiskType: 'SYNC_FLUSH' } });
    try {
      const pid = broker.child.pid!;
      const client = new LeanClient(broker.brokerAddr);
      await client.ready;
      const groups = Array.from({ length: GROUPS }, (_, i) => `GID_BURST_${i}`);
      const body = Buffer.from(
        JSON.stringify({
          clientID: 'burst-client',
          consumerDataSet: groups.map((g) => ({
            groupName: g,
            consumeType: 'CONSUME_PASSIVELY',
            messageModel: 'CLUSTERING',
            consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
            unitMode: false,
            subscriptionDataSet: [{ topic: 'BURST_SUB', subString: '*', tagsSet: [], codeSet: [], subVersion: 0, classFilterMode: false }],
          })),
          producerDataSet: [{ groupName: 'PID_BURST' }],
        }),
      );
      let t0 = Date.now();
      const hb = await client.invoke(34, {}, body, 60_000);
      const heartbeatMs = Date.now() - t0;
      assert.equal(hb.code, 0, hb.remark ?? '');
      const rssAfterHeartbeat = peakRssBytes(pid);

      t0 = Date.now();
      const replies = await Promise.all(
        Array.from({ length: TOPICS }, (_, i) => client.send(`BURST_T${i}`, -1, Buffer.from(`m${i}`), { KEYS: `k${i}` }).catch((e: Error) => ({ code: -1, remark: e.message, extFields: {} }))),
      );
      const sendsMs = Date.now() - t0;
      const failed = replies.filter((r) => r.code !== 0);
      assert.equal(failed.length, 0, `first failure: ${failed[0]?.code} ${failed[0]?.remark}`);
      const peak = peakRssBytes(pid);
      console.log(`# heartbeat ${GROUPS} groups: ${heartbeatMs} ms (peak RSS ${(rssAfterHeartbeat / 2 ** 20).toFixed(0)} MiB); ${TOPICS} sends to new topics: ${sendsMs} ms; peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB`);
      assert.ok(heartbeatMs < 20_000, `heartbeat answered in ${heartbeatMs} ms`);
      assert.ok(sendsMs < 60_000, `sends answered in ${sendsMs} ms`);
      assert.ok(peak < 1024 * 2 ** 20, `peak RSS ${peak} bytes`);

      // A normal send still works, then the process dies without a shutdown.
      const after = await client.send('BURST_T0', 0, Buffer.from('after'), {});
      assert.equal(after.code, 0);
      client.close();
      await broker.kill();
      broker = null;
      const topics = table(storeDir, 'topics.json', 'topicConfigTable');
      const groupTable = table(storeDir, 'subscriptionGroup.json', 'subscriptionGroupTable');
      assert.equal(groups.filter((g) => !(g in groupTable)).length, 0, 'every group is on disk');
      assert.equal(groups.filter((g) => !(`%RETRY%${g}` in topics)).length, 0, 'every retry topic is on disk');
      assert.equal(Array.from({ length: TOPICS }, (_, i) => `BURST_T${i}`).filter((t) => !(t in topics)).length, 0, 'every new topic is on disk');
    } finally {
      await broker?.kill();
      rmSync(storeDir, { recursive: true, force: true });
    }
  });
});
