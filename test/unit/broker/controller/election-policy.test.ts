import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rankCandidates, type ReplicaRegistration } from '../../../../src/broker/controller/election-policy.js';
import { resolveControllerConfig } from '../../../../src/broker/controller/controller-config.js';

function r(replicaId: number, lastEpoch: number, maxOffset: number, priority = 2147483647): ReplicaRegistration {
  return { replicaId, addr: `127.0.0.1:${10000 + replicaId}`, haAddr: `127.0.0.1:${20000 + replicaId}`, priority, lastEpoch, maxOffset };
}
const ids = (l: ReplicaRegistration[]): number[] => l.map((x) => x.replicaId);

describe('election policy (Apache DefaultElectPolicy order)', () => {
  it('sync state set first, then epoch, then offset, then priority, then id', () => {
    const alive = [r(1, 5, 100), r(2, 6, 50), r(3, 6, 80), r(4, 6, 80, 1), r(5, 9, 999)];
    assert.deepEqual(ids(rankCandidates(alive, [1, 2, 3, 4], false)), [4, 3, 2, 1]);
  });
  it('no sync state set yet: every alive replica is eligible', () => {
    assert.deepEqual(ids(rankCandidates([r(2, 0, 10), r(1, 0, 10)], null, false)), [1, 2]);
  });
  it('no alive member: nobody unless enableElectUncleanMaster', () => {
    const alive = [r(2, 3, 10), r(3, 3, 20)];
    assert.deepEqual(ids(rankCandidates(alive, [1], false)), []);
    assert.deepEqual(ids(rankCandidates(alive, [1], true)), [3, 2]);
  });
  it('config keys use Apache names and defaults; haMaxTimeSlaveNotCatchup is an alias', () => {
    const c = resolveControllerConfig({ enableControllerMode: 'true', haMaxTimeSlaveNotCatchup: '7000' });
    assert.equal(c.enableControllerMode, true);
    assert.equal(c.syncStateSetMaxOutOfSyncTimeMs, 7000);
    assert.equal(c.allAckInSyncStateSet, false);
    assert.equal(c.enableElectUncleanMaster, false);
    assert.equal(c.etcdEndpoints, 'http://127.0.0.1:2379');
    assert.throws(() => resolveControllerConfig({ controllerType: 'DLedger' }), /etcd only/);
  });
});
