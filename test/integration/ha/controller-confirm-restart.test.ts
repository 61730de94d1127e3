/**
 * Controller mode: a former master restarted with an unconfirmed tail does not serve it
 * (docs/failover.md "What consumers see"; the confirm offset is persisted in the checkpoint and
 * bounds start-up dispatch, as in Apache 5.3.3). Real processes: etcd + `tsmq namesrv` + 2
 * replicas, allAckInSyncStateSet=true.
 *
 * 1. Master A: 3 messages acknowledged by the sync state set {A, B} (consumable).
 * 2. B is SIGSTOPped; A stores 3 more (WAIT=false): stored, not confirmed, not consumable.
 * 3. A is SIGKILLed and restarted at once, while its old master key still holds (lease TTL 15 s)
 *    and B is frozen, so nobody is master: A's queue holds 3 consumable messages, not 6
 *    (before the fix, the restart dispatched the whole CommitLog: 6).
 * 4. When the lease ends A is elected again (B is not alive): its data is the group's and all 6
 *    become consumable, as in Apache. B is thawed at the end.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EtcdGroupStore, type GroupView } from '../../../src/broker/controller/etcd-group-store.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { EtcdServer, etcdSkipReason } from '../../support/etcd-server.js';
import { createTopic, HaCluster, queueMaxOffsets, waitUntil, type BrokerSpec } from '../../support/ha-cluster.js';
import { rawInvoke, type RawReply } from '../../support/raw-remoting.js';

const REPLICAS = ['r1', 'r2'];
const TOPIC = 'CtlConfirmRestart';
const BROKER_NAME = 'ctlconfirm';
const LEASE_TTL_S = 15;

function send(addr: string, body: string, wait: boolean): Promise<RawReply> {
  return rawInvoke(addr, {
    code: 310,
    extFields: { a: 'PID_RAW', b: TOPIC, c: 'TBW102', d: 1, e: 0, f: 0, g: Date.now(), h: 0, i: `TAGS\u0001raw\u0002WAIT\u0001${wait}\u0002`, j: 0, k: false },
    body: Buffer.from(body),
  });
}

describe('controller mode: a restarted former master does not serve its unconfirmed tail', { skip: etcdSkipReason() ?? false, timeout: 120_000 }, () => {
  let etcd: EtcdServer;
  let cluster: HaCluster;
  let group: EtcdGroupStore;
  let frozenPid = 0;
  const idOf = (name: string): number => REPLICAS.indexOf(name) + 1;
  const spec = (name: string): BrokerSpec => ({
    name,
    brokerName: BROKER_NAME,
    brokerId: idOf(name),
    brokerRole: 'SLAVE',
    conf: { enableControllerMode: 'true', etcdEndpoints: etcd.endpoint, allAckInSyncStateSet: 'true', etcdLeaseTtlSeconds: String(LEASE_TTL_S), syncStateSetMaxOutOfSyncTimeMs: '600000', registerNameServerPeriod: '1000' },
  });

  before(async () => {
    etcd = await EtcdServer.start();
    cluster = await HaCluster.start();
    group = new EtcdGroupStore([etcd.endpoint], '/tsmq/controller', 'HaCluster', BROKER_NAME, 2000);
    for (const n of REPLICAS) await cluster.startBroker(spec(n));
  });

  after(async () => {
    if (frozenPid) process.kill(frozenPid, 'SIGCONT');
    group?.close();
    await cluster?.close();
    await etcd?.close();
  });

  it('3 confirmed of 6 stay 3 after the restart, until the replica is elected', async () => {
    let v0: GroupView | null = null;
    await waitUntil(
      async () => {
        const v = await group.view().catch(() => null);
        if (v?.master && v.master.record.epochs !== null && v.syncStateSet?.masterEpoch === v.master.epoch && v.syncStateSet.members.length === 2) v0 = v;
        return v0 !== null;
      },
      30_000,
      () => `no full sync state set\n${cluster.logs(2000)}`,
    );
    const a = REPLICAS[v0!.master!.record.replicaId - 1]!;
    const b = REPLICAS.find((n) => n !== a)!;
    for (const n of REPLICAS) await createTopic(cluster.addr(n), TOPIC, 1);
    for (let i = 0; i < 3; i++) {
      const r = await send(cluster.addr(a), `c${i}`, true);
      assert.equal(r.header.code, ResponseCode.SUCCESS, `confirmed send ${i}: ${r.header.code} ${r.header.remark}`);
    }
    assert.deepEqual(await queueMaxOffsets(cluster.addr(a), TOPIC, 1), [3]);
    await new Promise((r) => setTimeout(r, 1500)); // the checkpoint timer (1 s) wrote the confirm offset

    frozenPid = cluster.broker(b).proc!.child.pid!;
    process.kill(frozenPid, 'SIGSTOP');
    for (let i = 0; i < 3; i++) assert.equal((await send(cluster.addr(a), `u${i}`, false)).header.code, ResponseCode.SUCCESS);
    assert.deepEqual(await queueMaxOffsets(cluster.addr(a), TOPIC, 1), [3], 'the tail is not consumable while running');

    await cluster.kill(a);
    await cluster.startBroker(spec(a));
    const restarted = await queueMaxOffsets(cluster.addr(a), TOPIC, 1);
    const view = await group.view();
    assert.equal(view.master?.epoch, v0!.master!.epoch, `A was elected again before the check (${JSON.stringify(view.master)}): the lease TTL is too short for this machine`);
    assert.deepEqual(restarted, [3], 'the restarted replica serves only the confirmed messages');

    await waitUntil(
      async () => {
        const v = await group.view().catch(() => null);
        return !!v?.master && v.master.epoch !== v0!.master!.epoch && v.master.record.replicaId === idOf(a) && v.master.record.epochs !== null;
      },
      LEASE_TTL_S * 1000 + 20_000,
      () => `A not elected again\n${cluster.logs(2000)}`,
    );
    await waitUntil(async () => (await queueMaxOffsets(cluster.addr(a), TOPIC, 1))[0] === 6, 10_000, () => 'the elected replica does not serve its data');
  });
});
