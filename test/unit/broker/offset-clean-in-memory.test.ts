/**
 * Deleting a topic (cleanOffsetByTopic) or a group's offsets (removeGroup) also forgets the
 * in-memory pull ends and pending resets of those keys (soak finding: they outlived the topic or
 * group for good, and a topic created again under the same name reported the deleted one's pull
 * offset as its own — ConsumeStats pullOffset / in flight). Apache's cleanOffsetByTopic empties
 * its pullOffsetTable and resetOffsetTable entries too.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsumerOffsetManager } from '../../../src/broker/offset/consumer-offset-manager.js';
import { ManualClock } from '../../../src/common/time/clock.js';

describe('ConsumerOffsetManager: deleted topics and groups leave nothing in memory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tsmq-offset-clean-'));
  const make = () => new ConsumerOffsetManager(join(dir, `consumerOffset-${Math.random()}.json`), { clock: new ManualClock(1_700_000_000_000) });

  it('cleanOffsetByTopic drops the committed offsets, pull ends and pending resets of the topic only', () => {
    const m = make();
    for (const t of ['T', 'KEEP']) {
      m.commitOffset('127.0.0.1:1', 'G', t, 0, 10);
      m.commitPullOffset('G', t, 0, 100);
      m.assignResetOffset('127.0.0.1:1', 'G2', t, 1, 5);
    }
    m.cleanOffsetByTopic('T');
    assert.equal(m.queryOffset('G', 'T', 0), -1);
    assert.equal(m.queryPullOffset('G', 'T', 0), -1, 'no pull end of the deleted topic');
    assert.equal(m.queryThenEraseResetOffset('G2', 'T', 1), undefined, 'no pending reset of the deleted topic');
    assert.equal(m.queryOffset('G', 'KEEP', 0), 10);
    assert.equal(m.queryPullOffset('G', 'KEEP', 0), 100);
    assert.equal(m.queryThenEraseResetOffset('G2', 'KEEP', 1), 5);
  });

  it('removeGroup drops the committed offsets, pull ends and pending resets of the group only', () => {
    const m = make();
    for (const g of ['G', 'KEEP']) {
      m.commitOffset('127.0.0.1:1', g, 'T', 0, 10);
      m.commitPullOffset(g, 'T', 0, 100);
      m.assignResetOffset('127.0.0.1:1', g, 'T', 1, 5);
    }
    m.removeGroup('G');
    assert.equal(m.queryOffset('G', 'T', 0), -1);
    assert.equal(m.queryPullOffset('G', 'T', 0), -1);
    assert.equal(m.queryThenEraseResetOffset('G', 'T', 1), undefined);
    assert.equal(m.queryPullOffset('KEEP', 'T', 0), 100);
    assert.equal(m.queryThenEraseResetOffset('KEEP', 'T', 1), 5);
    rmSync(dir, { recursive: true, force: true });
  });
});
