import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/common/time/clock.js';
import { RouteInfoManager, type RouteInfoManagerOptions } from '../../../src/namesrv/route/route-info-manager.js';
import type { DataVersion, RegisterBrokerRequest, TopicConfig } from '../../../src/namesrv/route/route-types.js';
import { encodeTopicRouteData } from '../../../src/namesrv/route/route-json.js';

function topics(...list: Array<[string, number, number?]>): Map<string, TopicConfig> {
  return new Map(list.map(([name, nums, perm]) => [name, { topicName: name, readQueueNums: nums, writeQueueNums: nums, perm: perm ?? 6, topicSysFlag: 0 }]));
}

function reg(over: Partial<RegisterBrokerRequest> & { table?: Map<string, TopicConfig>; dv?: DataVersion }): RegisterBrokerRequest {
  return {
    clusterName: 'DefaultCluster',
    brokerAddr: '10.0.0.1:10911',
    brokerName: 'broker-a',
    brokerId: 0,
    haServerAddr: '10.0.0.1:10912',
    topicConfigWrapper: { topicConfigTable: over.table ?? topics(['TopicA', 4]), dataVersion: over.dv ?? { stateVersion: 0, timestamp: 1, counter: 1 } },
    ...over,
  };
}

/**
 * A RouteInfoManager whose registerBroker first registers a broker id it does not know yet with
 * an empty topic table when the body holds exactly one topic: the tests below are about merging
 * and keep their bodies short, while such a body from an unknown broker id is refused (Apache
 * 5.3.3; pinned by the last test, on a plain RouteInfoManager).
 */
function routes(opts?: RouteInfoManagerOptions): RouteInfoManager {
  const m = new RouteInfoManager(opts);
  const real = m.registerBroker.bind(m);
  m.registerBroker = (req) => {
    const w = req.topicConfigWrapper;
    if (w && w.topicConfigTable.size === 1 && !m.brokerAddrTable.get(req.brokerName)?.brokerAddrs.has(req.brokerId)) {
      real({ ...req, topicConfigWrapper: { ...w, topicConfigTable: new Map() } });
    }
    return real(req);
  };
  return m;
}

test('master registration creates queue and broker data; route is sorted and stable', () => {
  const m = routes({ clock: new ManualClock(1000) });
  m.registerBroker(reg({ brokerName: 'broker-b', brokerAddr: '10.0.0.2:10911', table: topics(['TopicA', 8]) }));
  const result = m.registerBroker(reg({}));
  assert.deepEqual(result, { haServerAddr: null, masterAddr: null });
  const route = m.pickupTopicRouteData('TopicA')!;
  assert.deepEqual(route.queueDatas.map((q) => [q.brokerName, q.readQueueNums]), [['broker-a', 4], ['broker-b', 8]]);
  assert.deepEqual(route.brokerDatas.map((b) => b.brokerName), ['broker-a', 'broker-b']);
  assert.equal(
    encodeTopicRouteData(route).toString(),
    '{"brokerDatas":[' +
      '{"brokerAddrs":{"0":"10.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false},' +
      '{"brokerAddrs":{"0":"10.0.0.2:10911"},"brokerName":"broker-b","cluster":"DefaultCluster","enableActingMaster":false}],' +
      '"filterServerTable":{},"queueDatas":[' +
      '{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4},' +
      '{"brokerName":"broker-b","perm":6,"readQueueNums":8,"topicSysFlag":0,"writeQueueNums":8}]}',
  );
  assert.equal(m.pickupTopicRouteData('Nope'), null);
  assert.deepEqual(m.getAllTopicList(), ['TopicA']);
  assert.deepEqual([...m.clusterAddrTable.get('DefaultCluster')!].sort(), ['broker-a', 'broker-b']);
});

test('slave gets its master address and HA address; slave topic data is ignored', () => {
  const m = routes({ clock: new ManualClock(0) });
  m.registerBroker(reg({}));
  const r = m.registerBroker(reg({ brokerId: 1, brokerAddr: '10.0.0.9:10911', haServerAddr: '10.0.0.9:10912', table: topics(['SlaveOnly', 2]) }));
  assert.deepEqual(r, { haServerAddr: '10.0.0.1:10912', masterAddr: '10.0.0.1:10911' });
  assert.equal(m.pickupTopicRouteData('SlaveOnly'), null);
  assert.deepEqual([...m.pickupTopicRouteData('TopicA')!.brokerDatas[0]!.brokerAddrs], [[0, '10.0.0.1:10911'], [1, '10.0.0.9:10911']]);
  // a slave without a live master gets nothing
  const m2 = routes();
  assert.deepEqual(m2.registerBroker(reg({ brokerId: 1 })), { haServerAddr: null, masterAddr: null });
});

test('one address keeps one broker id (slave promoted to master)', () => {
  const m = routes();
  m.registerBroker(reg({ brokerId: 1, brokerAddr: '10.0.0.5:10911' }));
  m.registerBroker(reg({ brokerId: 0, brokerAddr: '10.0.0.5:10911' }));
  assert.deepEqual([...m.brokerAddrTable.get('broker-a')!.brokerAddrs], [[0, '10.0.0.5:10911']]);
});

test('with an unchanged dataVersion only topics new to this broker are added (Apache 5 isTopicConfigChanged)', () => {
  const m = routes();
  const dv = { stateVersion: 0, timestamp: 5, counter: 1 };
  m.registerBroker(reg({ dv }));
  m.registerBroker(reg({ dv, table: topics(['TopicA', 16], ['TopicB', 1]) }));
  assert.equal(m.pickupTopicRouteData('TopicA')!.queueDatas[0]!.readQueueNums, 4, 'a known topic is not rewritten');
  assert.equal(m.pickupTopicRouteData('TopicB')!.queueDatas[0]!.readQueueNums, 1, 'a topic missing for this broker is added');
  m.registerBroker(reg({ dv, table: topics(['TopicA', 16], ['TopicB', 8]) }));
  assert.equal(m.pickupTopicRouteData('TopicB')!.queueDatas[0]!.readQueueNums, 1);
  assert.equal(m.isBrokerTopicConfigChanged('10.0.0.1:10911', dv), false);
  const dv2 = { ...dv, counter: 2 };
  assert.equal(m.isBrokerTopicConfigChanged('10.0.0.1:10911', dv2), true);
  m.registerBroker(reg({ dv: dv2, table: topics(['TopicA', 16], ['TopicB', 1]) }));
  assert.equal(m.pickupTopicRouteData('TopicA')!.queueDatas[0]!.readQueueNums, 16);
  assert.equal(m.pickupTopicRouteData('TopicB')!.queueDatas[0]!.readQueueNums, 1);
  assert.equal(m.isBrokerTopicConfigChanged('10.9.9.9:1', dv2), true, 'unknown broker counts as changed');
});

test('brokers silent for more than 120 s are dropped; heartbeats keep them', () => {
  const clock = new ManualClock(10_000);
  const m = routes({ clock });
  m.registerBroker(reg({}));
  m.registerBroker(reg({ brokerName: 'broker-b', brokerAddr: '10.0.0.2:10911', table: topics(['TopicB', 2]), channelId: 'ch-b' }));
  clock.advance(60_000);
  assert.equal(m.updateBrokerInfoUpdateTimestamp('10.0.0.2:10911'), true);
  assert.equal(m.updateBrokerInfoUpdateTimestamp('10.9.9.9:1'), false);
  clock.advance(60_000); // broker-a silent exactly 120 s: still alive (Apache uses strict >)
  assert.deepEqual(m.scanNotActiveBroker(), []);
  clock.advance(1);
  assert.deepEqual(m.scanNotActiveBroker(), [{ brokerAddr: '10.0.0.1:10911', channelId: null }]);
  assert.equal(m.pickupTopicRouteData('TopicA'), null);
  assert.equal(m.brokerAddrTable.has('broker-a'), false);
  assert.deepEqual([...m.clusterAddrTable.get('DefaultCluster')!], ['broker-b']);
  clock.advance(60_000);
  assert.deepEqual(m.scanNotActiveBroker(), [{ brokerAddr: '10.0.0.2:10911', channelId: 'ch-b' }]);
  assert.equal(m.clusterAddrTable.size, 0);
  assert.equal(m.topicQueueTable.size, 0);
  assert.equal(m.brokerLiveTable.size, 0);
});

test('per-broker heartbeat timeout (Apache 5 heartbeatTimeoutMillis)', () => {
  const clock = new ManualClock(0);
  const m = routes({ clock });
  m.registerBroker(reg({ heartbeatTimeoutMs: 10_000 }));
  clock.advance(10_001);
  assert.equal(m.scanNotActiveBroker().length, 1);
});

test('a master leaving keeps the group while a slave remains; the last one removes its topics', () => {
  const m = routes();
  m.registerBroker(reg({}));
  m.registerBroker(reg({ brokerId: 1, brokerAddr: '10.0.0.9:10911' }));
  m.unregisterBroker('DefaultCluster', '10.0.0.1:10911', 'broker-a', 0);
  const route = m.pickupTopicRouteData('TopicA')!;
  assert.deepEqual([...route.brokerDatas[0]!.brokerAddrs], [[1, '10.0.0.9:10911']]);
  m.unregisterBroker('DefaultCluster', '10.0.0.9:10911', 'broker-a', 1);
  assert.equal(m.pickupTopicRouteData('TopicA'), null);
  assert.equal(m.clusterAddrTable.size, 0);
});

test('onChannelDestroy drops the broker registered over that channel', () => {
  const m = routes();
  m.registerBroker(reg({ channelId: 'c1' }));
  assert.equal(m.onChannelDestroy('other'), null);
  assert.deepEqual(m.onChannelDestroy('c1'), { brokerAddr: '10.0.0.1:10911', channelId: 'c1' });
  assert.equal(m.brokerAddrTable.size, 0);
});

test('auto-create route from TBW102: min(4, writeQueueNums) queues, inherit bit removed', () => {
  const m = routes();
  assert.equal(m.pickupAutoCreateRouteData(), null);
  m.registerBroker(reg({ table: topics(['TBW102', 8, 7], ['TopicA', 4]) }));
  m.registerBroker(reg({ brokerName: 'broker-b', brokerAddr: '10.0.0.2:10911', table: topics(['TBW102', 2, 7]) }));
  const route = m.pickupAutoCreateRouteData()!;
  assert.deepEqual(route.queueDatas, [
    { brokerName: 'broker-a', readQueueNums: 4, writeQueueNums: 4, perm: 6, topicSysFlag: 0 },
    { brokerName: 'broker-b', readQueueNums: 2, writeQueueNums: 2, perm: 6, topicSysFlag: 0 },
  ]);
  assert.deepEqual(route.brokerDatas.map((b) => b.brokerName), ['broker-a', 'broker-b']);
  // the template itself is untouched
  assert.equal(m.pickupTopicRouteData('TBW102')!.queueDatas[0]!.perm, 7);
});

test('deleteTopic everywhere or per cluster; deleteTopicWithBrokerRegistration option', () => {
  const m = routes();
  m.registerBroker(reg({ table: topics(['T1', 1], ['T2', 1]) }));
  m.registerBroker(reg({ clusterName: 'C2', brokerName: 'broker-c', brokerAddr: '10.0.0.3:1', table: topics(['T1', 1]) }));
  m.deleteTopic('T1', 'C2');
  assert.deepEqual(m.pickupTopicRouteData('T1')!.queueDatas.map((q) => q.brokerName), ['broker-a']);
  m.deleteTopic('T1');
  assert.equal(m.pickupTopicRouteData('T1'), null);

  const m2 = routes({ deleteTopicWithBrokerRegistration: true });
  m2.registerBroker(reg({ table: topics(['T1', 1], ['T2', 1]), dv: { stateVersion: 0, timestamp: 1, counter: 1 } }));
  m2.registerBroker(reg({ table: topics(['T2', 1]), dv: { stateVersion: 0, timestamp: 1, counter: 2 } }));
  assert.deepEqual(m2.getAllTopicList(), ['T2']);
});

test('auto-create route for %RETRY%<group> and %DLQ%<group> has one queue, as the broker creates them', () => {
  const m = routes();
  m.registerBroker(reg({ table: topics(['TBW102', 8, 7]) }));
  for (const topic of ['%RETRY%GID_X', '%DLQ%GID_X']) {
    assert.deepEqual(m.pickupAutoCreateRouteData(topic)!.queueDatas, [
      { brokerName: 'broker-a', readQueueNums: 1, writeQueueNums: 1, perm: 6, topicSysFlag: 0 },
    ]);
  }
  assert.equal(m.pickupAutoCreateRouteData('Plain')!.queueDatas[0]!.writeQueueNums, 4);
});

test('a deleted topic gets no TBW102 fallback route until a broker registers it again; never-seen topics still do', () => {
  const m = routes();
  m.registerBroker(reg({ table: topics(['TBW102', 8, 7], ['Gone', 2]) }));
  assert.ok(m.pickupAutoCreateRouteData('NeverSeen'), 'ali-ons auto-create needs the fallback');
  m.deleteTopic('Gone');
  assert.equal(m.pickupTopicRouteData('Gone'), null);
  assert.equal(m.pickupAutoCreateRouteData('Gone'), null);
  assert.equal(m.isDeletedTopic('Gone'), true);
  // re-created (e.g. updateTopic or a Java producer's auto-create): registered with a new data version
  m.registerBroker(reg({ table: topics(['TBW102', 8, 7], ['Gone', 2]), dv: { stateVersion: 0, timestamp: 2, counter: 2 } }));
  assert.equal(m.isDeletedTopic('Gone'), false);
  assert.equal(m.pickupTopicRouteData('Gone')!.queueDatas[0]!.writeQueueNums, 2);
  // deleting per cluster only tombstones once no broker group serves it
  m.registerBroker(reg({ clusterName: 'C2', brokerName: 'broker-c', brokerAddr: '10.0.0.3:1', table: topics(['Gone', 1]) }));
  m.deleteTopic('Gone', 'C2');
  assert.equal(m.isDeletedTopic('Gone'), false);
  m.deleteTopic('Gone', 'DefaultCluster');
  assert.equal(m.isDeletedTopic('Gone'), true);
});

test('wipe / add write perm of a broker group; topics by cluster', () => {
  const m = routes();
  m.registerBroker(reg({ table: topics(['T1', 2, 6], ['T2', 2, 7]) }));
  m.registerBroker(reg({ clusterName: 'C2', brokerName: 'broker-c', brokerAddr: '10.0.0.3:1', table: topics(['T3', 1, 6]) }));
  assert.equal(m.operateWritePermOfBroker('broker-a', 'wipe'), 2);
  assert.deepEqual([m.pickupTopicRouteData('T1')!.queueDatas[0]!.perm, m.pickupTopicRouteData('T2')!.queueDatas[0]!.perm], [4, 5]);
  assert.equal(m.pickupTopicRouteData('T3')!.queueDatas[0]!.perm, 6, 'other broker groups untouched');
  assert.equal(m.operateWritePermOfBroker('broker-a', 'add'), 2);
  assert.deepEqual([m.pickupTopicRouteData('T1')!.queueDatas[0]!.perm, m.pickupTopicRouteData('T2')!.queueDatas[0]!.perm], [6, 6]);
  assert.equal(m.operateWritePermOfBroker('nope', 'wipe'), 0);
  assert.deepEqual(m.getTopicsByCluster('DefaultCluster'), ['T1', 'T2']);
  assert.deepEqual(m.getTopicsByCluster('C2'), ['T3']);
  assert.deepEqual(m.getTopicsByCluster('none'), []);
});

test('an incremental (one-topic) registration with a new dataVersion changes that topic and keeps the others', () => {
  const m = routes();
  const full = topics(['TBW102', 8, 7], ['T1', 4], ['T2', 4], ['T3', 4]);
  m.registerBroker(reg({ table: full, dv: { stateVersion: 0, timestamp: 10, counter: 1 } }));
  m.registerBroker(reg({ brokerName: 'broker-b', brokerAddr: '10.0.0.2:1', table: topics(['T1', 2]) }));
  m.registerBroker(reg({ table: topics(['T2', 16]), dv: { stateVersion: 0, timestamp: 11, counter: 2 } }));
  m.registerBroker(reg({ table: topics(['T4', 1, 2]), dv: { stateVersion: 0, timestamp: 12, counter: 3 } }));
  assert.deepEqual(m.getAllTopicList(), ['T1', 'T2', 'T3', 'T4', 'TBW102']);
  assert.deepEqual(m.pickupTopicRouteData('T1')!.queueDatas.map((q) => [q.brokerName, q.writeQueueNums]), [['broker-a', 4], ['broker-b', 2]]);
  assert.equal(m.pickupTopicRouteData('T2')!.queueDatas[0]!.writeQueueNums, 16);
  assert.deepEqual(m.pickupTopicRouteData('T4')!.queueDatas[0], { brokerName: 'broker-a', readQueueNums: 1, writeQueueNums: 1, perm: 2, topicSysFlag: 0 });
  assert.deepEqual(m.queryBrokerTopicConfig('10.0.0.1:10911'), { stateVersion: 0, timestamp: 12, counter: 3 }, 'the increment\'s dataVersion is stored');
  // the next periodic full registration with that same dataVersion rewrites nothing but adds what is missing
  const after = topics(['TBW102', 8, 7], ['T1', 4], ['T2', 16], ['T3', 4], ['T4', 1, 2], ['T5', 3]);
  after.get('T3')!.writeQueueNums = 99; // not applied: same dataVersion and T3 known (Apache)
  m.registerBroker(reg({ table: after, dv: { stateVersion: 0, timestamp: 12, counter: 3 } }));
  assert.equal(m.pickupTopicRouteData('T3')!.queueDatas[0]!.writeQueueNums, 4);
  assert.equal(m.pickupTopicRouteData('T5')!.queueDatas[0]!.writeQueueNums, 3);
  // a full registration with a new dataVersion rewrites every topic in it and keeps absent ones
  m.registerBroker(reg({ table: topics(['T3', 99]), dv: { stateVersion: 0, timestamp: 13, counter: 4 } }));
  assert.equal(m.pickupTopicRouteData('T3')!.queueDatas[0]!.writeQueueNums, 99);
  assert.deepEqual(m.getAllTopicList(), ['T1', 'T2', 'T3', 'T4', 'T5', 'TBW102']);
});

test('a deleted topic stays deleted across increments of other topics; its own re-registration brings it back', () => {
  const m = routes();
  m.registerBroker(reg({ table: topics(['TBW102', 8, 7], ['Gone', 2], ['Kept', 2]), dv: { stateVersion: 0, timestamp: 1, counter: 1 } }));
  m.deleteTopic('Gone');
  m.registerBroker(reg({ table: topics(['Other', 1]), dv: { stateVersion: 0, timestamp: 2, counter: 2 } }));
  assert.equal(m.pickupTopicRouteData('Gone'), null);
  assert.equal(m.pickupAutoCreateRouteData('Gone'), null);
  assert.deepEqual(m.getAllTopicList(), ['Kept', 'Other', 'TBW102']);
  // the broker's next full registration no longer carries it (deleted in the broker too)
  m.registerBroker(reg({ table: topics(['TBW102', 8, 7], ['Kept', 2], ['Other', 1]), dv: { stateVersion: 0, timestamp: 3, counter: 3 } }));
  assert.equal(m.pickupTopicRouteData('Gone'), null);
  m.registerBroker(reg({ table: topics(['Gone', 5]), dv: { stateVersion: 0, timestamp: 4, counter: 4 } }));
  assert.equal(m.pickupTopicRouteData('Gone')!.queueDatas[0]!.writeQueueNums, 5);
  assert.equal(m.isDeletedTopic('Gone'), false);
});

test('deleteTopicWithBrokerRegistration: applied even with an unchanged dataVersion, skipped when the body carries static-topic mappings (Apache)', () => {
  const m = routes({ deleteTopicWithBrokerRegistration: true });
  const dv = { stateVersion: 0, timestamp: 1, counter: 1 };
  m.registerBroker(reg({ table: topics(['T1', 1], ['T2', 1], ['T3', 1]), dv }));
  m.registerBroker(reg({ table: topics(['T1', 1], ['T2', 1]), dv }));
  assert.deepEqual(m.getAllTopicList(), ['T1', 'T2']);
  const withMapping = reg({ table: topics(['T1', 1]), dv: { ...dv, counter: 2 } });
  withMapping.topicConfigWrapper!.topicQueueMappingInfoMap = new Map([['T1', { bname: 'broker-a', topic: 'T1' }]]);
  m.registerBroker(withMapping);
  assert.deepEqual(m.getAllTopicList(), ['T1', 'T2']);
});

test('a one-topic body from a broker id not registered is refused (null), nothing recorded; an empty or two-topic body is not (Apache 5.3.3 RouteInfoManager.registerBroker)', () => {
  const m = new RouteInfoManager();
  assert.equal(m.registerBroker(reg({ table: topics(['Incr', 2]) })), null);
  assert.equal(m.brokerAddrTable.size, 0);
  assert.equal(m.clusterAddrTable.size, 0);
  assert.equal(m.brokerLiveTable.size, 0);
  assert.equal(m.pickupTopicRouteData('Incr'), null);
  assert.deepEqual(m.registerBroker(reg({ table: topics(['A', 1], ['B', 1]) })), { haServerAddr: null, masterAddr: null });
  assert.notEqual(m.registerBroker(reg({ table: topics(['Incr', 2]), dv: { stateVersion: 0, timestamp: 2, counter: 2 } })), null, 'known now: an increment merges');
  assert.equal(m.pickupTopicRouteData('Incr')!.queueDatas[0]!.writeQueueNums, 2);
  assert.equal(m.registerBroker(reg({ brokerId: 1, brokerAddr: '10.0.0.9:1', table: topics(['Incr', 2]) })), null, 'another id of a known broker name');
  assert.notEqual(m.registerBroker(reg({ brokerId: 1, brokerAddr: '10.0.0.9:1', table: new Map() })), null);
});
