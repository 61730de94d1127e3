/**
 * A deleted topic's (or a group's deleted with its offsets) pop state stays forgotten across a
 * process crash right after the deletion: PopService.forgetTopic / forgetGroup write a FORGET
 * record into the pop log before they return (pop-state-store.ts `forget`). The crash is the pop
 * directory copied at the moment forgetTopic returns (what a killed process leaves: every write
 * made so far is in the page cache), then opened by a new store. Before the record, only a
 * compaction after the call made it durable, so the copy still held the states (session 9).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { PopStateStore } from '../../../src/broker/pop/pop-state-store.js';
import { PopService, type PopRequest } from '../../../src/broker/pop/pop-service.js';
import { decodePopLog } from '../../../src/broker/pop/pop-record-codec.js';
import { FakePopBroker } from './fake-pop-broker.js';

const fsPort = new NodeFileSystem();
const req = (group: string, topic: string): PopRequest => ({ group, topic, filter: null, batchSize: 10, invisibleMs: 60_000, fifo: false });

test('forgetTopic / forgetGroup: a crash right after the call keeps the states forgotten; the other topic\'s and group\'s stay, in flight included', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-pop-forget-'));
  const crashDirs: string[] = [];
  const clock = new ManualClock(1_000_000);
  const broker = new FakePopBroker(() => clock.nowMs());
  const openAt = (d: string): PopStateStore => PopStateStore.open({ dir: d, fs: fsPort, clock, flushIntervalMs: 60_000, syncFlush: false, compactLogBytes: 1 << 20 });
  const state = openAt(dir);
  const pop = new PopService({ broker, state, config: { popInitFromMin: true, popMaxScanMessages: 2048 }, clock });
  /** The pop directory as a process killed now leaves it. */
  const crashImage = (): string => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-pop-crash-'));
    fs.cpSync(dir, d, { recursive: true });
    crashDirs.push(d);
    return d;
  };
  try {
    for (const t of ['GONE', 'KEPT']) {
      broker.createTopic(t, 2);
      broker.send(t, 0, `${t}-a`);
      broker.send(t, 1, `${t}-b`);
    }
    for (const [g, t] of [['G', 'GONE'], ['G', 'KEPT'], ['G2', 'KEPT']] as const) assert.equal((await pop.pop(req(g, t))).messages.length, 2, `${g}/${t}`);
    await state.compact(); // the snapshot holds every state; later records go to the new log
    assert.equal(state.table.size, 6);

    const topicGone = pop.forgetTopic('GONE');
    const afterTopic = crashImage();
    assert.equal(await topicGone, 2);
    const groupGone = pop.forgetGroup('G2');
    const afterGroup = crashImage();
    assert.equal(await groupGone, 2);

    const r1 = openAt(afterTopic);
    assert.equal(r1.table.queuesOf('G', 'GONE').size, 0, 'the deleted topic\'s states stay forgotten after the crash');
    assert.equal(r1.table.queuesOf('G', 'KEPT').size, 2);
    assert.equal(r1.table.queuesOf('G2', 'KEPT').size, 2);
    assert.equal(r1.table.get('G', 'KEPT', 0)!.entries.get(0)!.acked, false, 'a delivery in flight on the other topic is still in flight');
    await r1.close();
    const r2 = openAt(afterGroup);
    assert.deepEqual([r2.table.queuesOf('G', 'GONE').size, r2.table.queuesOf('G2', 'KEPT').size, r2.table.queuesOf('G', 'KEPT').size], [0, 0, 2]);
    await r2.close();

    // a FORGET only drops what came before it: the topic created again pops from its start
    broker.send('GONE', 0, 'again');
    const again = await pop.pop(req('G', 'GONE'));
    assert.ok(again.messages.some((m) => m.message.body.toString() === 'again'));
    await state.flush();
    const log = decodePopLog(fs.readFileSync(path.join(dir, 'pop-1.log')));
    assert.deepEqual(log.records.filter((r) => r.type === 'FORGET'), [{ type: 'FORGET', topic: 'GONE' }, { type: 'FORGET', group: 'G2' }]);
    const r3 = openAt(crashImage());
    assert.ok(r3.table.queuesOf('G', 'GONE').size > 0, 'records after the FORGET rebuild the new topic\'s state');
    await r3.close();
  } finally {
    await state.close();
    for (const d of [dir, ...crashDirs]) fs.rmSync(d, { recursive: true, force: true });
  }
});

test('forget of nothing writes nothing; forget on a closed store answers 0', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-pop-forget0-'));
  try {
    const s = PopStateStore.open({ dir, fs: fsPort, clock: new ManualClock(1), flushIntervalMs: 60_000, syncFlush: false, compactLogBytes: 1 << 20 });
    await s.record({ type: 'MOVE', group: 'G', topic: 'T', queueId: 0, offset: 3 });
    const size = fs.statSync(path.join(dir, 'pop-0.log')).size;
    assert.equal(await s.forget({ topic: 'Other' }), 0);
    assert.equal(fs.statSync(path.join(dir, 'pop-0.log')).size, size);
    await s.close();
    assert.equal(await s.forget({ topic: 'T' }), 0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
