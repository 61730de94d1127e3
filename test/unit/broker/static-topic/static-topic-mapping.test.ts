/**
 * Static-topic mapping model and store (src/broker/static-topic): item offset arithmetic, Apache's
 * merge rules for UPDATE_AND_CREATE_STATIC_TOPIC, topicQueueMapping.json round trip, and the
 * route form (currIdMap) registered with the nameserver.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../../../src/common/time/clock.js';
import {
  checkItemOffsets, findItemForLogicOffset, findNextItem, toLogicOffsetLoosely, toLogicOffsetStrictly, toPhysicalOffset, type LogicQueueMappingItem,
} from '../../../../src/broker/static-topic/logic-queue-mapping-item.js';
import { decodeMappingDetail, mergeMappingDetail, toMappingInfo, type TopicQueueMappingDetail } from '../../../../src/broker/static-topic/topic-queue-mapping-detail.js';
import { TopicQueueMappingManager } from '../../../../src/broker/static-topic/topic-queue-mapping-manager.js';
import { parseLenientJson } from '../../../../src/broker/config-file/lenient-json.js';

const item = (gen: number, bname: string, queueId: number, logicOffset: number, startOffset = 0, endOffset = -1): LogicQueueMappingItem =>
  ({ gen, queueId, bname, logicOffset, startOffset, endOffset, timeOfStart: -1, timeOfEnd: -1 });

function detail(bname: string, epoch: number, queues: Record<number, LogicQueueMappingItem[]>): TopicQueueMappingDetail {
  return { topic: 'T', scope: '__global__', totalQueues: 4, bname, epoch, dirty: false, hostedQueues: new Map(Object.entries(queues).map(([k, v]) => [Number(k), v])) };
}

describe('LogicQueueMappingItem arithmetic (Apache computeStaticQueueOffset*/computePhysicalQueueOffset)', () => {
  const remapped = [item(0, 'a', 1, 0, 0, 8), item(1, 'b', 0, 10_000, 0)];

  it('logic ↔ physical offsets of a remapped queue', () => {
    assert.equal(toPhysicalOffset(remapped[1]!, 10_003), 3);
    assert.equal(toLogicOffsetStrictly(remapped[1]!, 3), 10_003);
    assert.equal(toLogicOffsetLoosely(remapped[0]!, 20), 8, 'capped at the decided end');
    assert.equal(toLogicOffsetLoosely(item(1, 'b', 0, -1), 5), -1, 'undecided item');
  });

  it('findItemForLogicOffset picks the latest item at or below the offset, else the earliest', () => {
    assert.equal(findItemForLogicOffset(remapped, 5)!.bname, 'a');
    assert.equal(findItemForLogicOffset(remapped, 10_000)!.bname, 'b');
    assert.equal(findItemForLogicOffset(remapped, Number.MAX_SAFE_INTEGER)!.bname, 'b');
    assert.equal(findItemForLogicOffset([item(1, 'b', 0, 10_000)], 3)!.bname, 'b', 'below every item: the earliest');
    assert.equal(findItemForLogicOffset([item(0, 'a', 1, 0), item(1, 'b', 0, -1)], 50)!.bname, 'a', 'an undecided leader is skipped');
    assert.equal(findNextItem(remapped, remapped[0]!)?.bname, 'b');
    assert.equal(findNextItem(remapped, remapped[1]!), null);
  });

  it('checkItemOffsets refuses what Apache refuses', () => {
    checkItemOffsets(remapped);
    assert.throws(() => checkItemOffsets([item(1, 'a', 0, 0), item(1, 'b', 0, 10)]), /gen does not increase/);
    assert.throws(() => checkItemOffsets([item(0, 'a', 0, -1), item(1, 'b', 0, 10)]), /non-latest item has negative logic offset/);
    assert.throws(() => checkItemOffsets([item(0, 'a', 0, 10), item(1, 'b', 0, 5)]), /base logic offset does not increase/);
    assert.throws(() => checkItemOffsets([item(0, 'a', -1, 0)]), /should not be negative/);
  });
});

describe('mergeMappingDetail (Apache TopicQueueMappingManager.updateTopicQueueMapping)', () => {
  const old = detail('a', 100, { 0: [item(0, 'a', 0, 0)], 1: [item(0, 'a', 1, 0)] });

  it('a smaller epoch or another scope is refused', () => {
    assert.throws(() => mergeMappingDetail(old, detail('a', 99, { 0: [item(0, 'a', 0, 0)] }), false), /small epoch 99 < 100/);
    assert.throws(() => mergeMappingDetail(old, { ...detail('a', 101, {}), scope: 'other' }, false), /unmatched scope/);
  });

  it('equal epoch: a missing queue or a changed leader is refused; a larger epoch keeps the missing queues', () => {
    assert.throws(() => mergeMappingDetail(old, detail('a', 100, { 0: [item(0, 'a', 0, 0)] }), false), /equal epoch with null data/);
    assert.throws(() => mergeMappingDetail(old, detail('a', 100, { 0: [item(0, 'a', 2, 0)], 1: [item(0, 'a', 1, 0)] }), false), /leader is different but epoch equal/);
    const merged = mergeMappingDetail(old, detail('a', 101, { 0: [item(0, 'a', 0, 0), item(1, 'b', 0, 10_000)] }), false);
    assert.deepEqual([...merged.hostedQueues.keys()].sort(), [0, 1]);
    assert.equal(merged.hostedQueues.get(0)!.length, 2);
    assert.equal(old.hostedQueues.get(0)!.length, 1, 'the held detail is not modified');
  });

  it('force skips the checks and keeps the old queues', () => {
    const merged = mergeMappingDetail(old, detail('a', 1, { 2: [item(0, 'a', 2, 0)] }), true);
    assert.deepEqual([...merged.hostedQueues.keys()].sort(), [0, 1, 2]);
  });

  it('the route form lists only the queues whose leader is on the broker', () => {
    const d = detail('a', 5, { 0: [item(0, 'a', 0, 0)], 1: [item(0, 'a', 1, 0, 0, 8), item(1, 'b', 0, 10_000)] });
    assert.deepEqual([...toMappingInfo(d).currIdMap], [[0, 0]]);
  });
});

describe('TopicQueueMappingManager (config/topicQueueMapping.json)', () => {
  it('stores, reloads and refuses a detail of another broker; fastjson bare integer keys are read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-static-'));
    try {
      const file = join(dir, 'topicQueueMapping.json');
      const clock = new ManualClock(1000);
      const m = new TopicQueueMappingManager(file, { clock, brokerName: 'a' });
      // as mqadmin's fastjson sends it: integer map keys unquoted
      const body = '{"bname":"a","currIdMap":{},"dirty":false,"epoch":7,"hostedQueues":{0:[{"bname":"a","endOffset":-1,"gen":0,"logicOffset":0,"queueId":3,"startOffset":0,"timeOfEnd":-1,"timeOfStart":-1}]},"scope":"__global__","topic":"T","totalQueues":8}';
      await m.update(decodeMappingDetail(parseLenientJson(body)), false);
      await assert.rejects(m.update(detail('b', 8, {}), false), /for broker b, this broker is a/);
      const doc = JSON.parse(readFileSync(file, 'utf8'));
      assert.equal(doc.topicQueueMappingInfoMap.T.hostedQueues['0'][0].queueId, 3);
      assert.equal(doc.dataVersion.counter, 1);
      const again = new TopicQueueMappingManager(file, { clock, brokerName: 'a' });
      assert.equal(again.load(), true);
      assert.equal(again.get('T')!.hostedQueues.get(0)![0]!.queueId, 3);
      assert.deepEqual(again.mappingInfoMap(), { T: { bname: 'a', currIdMap: { 0: 3 }, dirty: false, epoch: 7, scope: '__global__', topic: 'T', totalQueues: 8 } });
      assert.equal(again.delete('T'), true);
      await again.whenPersisted();
      assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')).topicQueueMappingInfoMap, {});
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
