/**
 * `tsmq admin` controller commands (get-controller-metadata, get-sync-state-set,
 * get-broker-epoch, elect-master) against etcd + `tsmq namesrv` + 3 controller-mode replicas,
 * text and --json, checked against etcd's state read by the test; elect-master moves the master
 * to the designated replica and refuses the current master (2011) and a dead id (2012).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { registerAdminToolCommands } from '../../../src/cli/commands/admin-commands.js';
import { EtcdGroupStore, type GroupView } from '../../../src/broker/controller/etcd-group-store.js';
import { EtcdServer, etcdSkipReason } from '../../support/etcd-server.js';
import { HaCluster, waitUntil } from '../../support/ha-cluster.js';

const REPLICAS = ['r1', 'r2', 'r3'];

async function runCli(args: string[]): Promise<{ out: string; error: Error | null }> {
  const program = new Command().exitOverride();
  registerAdminToolCommands(program);
  const out: string[] = [];
  const log = console.log;
  console.log = (...a: unknown[]) => void out.push(a.join(' '));
  try {
    await program.parseAsync(['node', 'tsmq', 'admin', ...args]);
    return { out: out.join('\n'), error: null };
  } catch (e) {
    return { out: out.join('\n'), error: e as Error };
  } finally {
    console.log = log;
  }
}

async function cliJson<T>(args: string[]): Promise<T> {
  const r = await runCli([...args, '--json']);
  assert.equal(r.error, null, r.error?.message);
  return JSON.parse(r.out) as T;
}

describe('tsmq admin controller commands', { skip: etcdSkipReason() ?? false, timeout: 120_000 }, () => {
  let etcd: EtcdServer;
  let cluster: HaCluster;
  let group: EtcdGroupStore;
  let v0: GroupView;
  const idOf = (name: string): number => REPLICAS.indexOf(name) + 1;

  async function fullSet(masterId?: number): Promise<GroupView> {
    let v: GroupView | null = null;
    await waitUntil(
      async () => {
        v = await group.view().catch(() => null);
        return !!v?.master && v.master.record.epochs !== null && (masterId === undefined || v.master.record.replicaId === masterId) && v.syncStateSet?.masterEpoch === v.master.epoch && v.syncStateSet.members.length === 3;
      },
      30_000,
      () => `no full sync state set: ${JSON.stringify(v)}\n${cluster.logs(2000)}`,
    );
    return v!;
  }

  before(async () => {
    etcd = await EtcdServer.start();
    cluster = await HaCluster.start();
    group = new EtcdGroupStore([etcd.endpoint], '/tsmq/controller', 'HaCluster', 'ctl', 2000);
    for (const n of REPLICAS) {
      await cluster.startBroker({ name: n, brokerName: 'ctl', brokerId: idOf(n), brokerRole: 'SLAVE', conf: { enableControllerMode: 'true', etcdEndpoints: etcd.endpoint, registerNameServerPeriod: '1000' } });
    }
    v0 = await fullSet();
  });

  after(async () => {
    group?.close();
    await cluster?.close();
    await etcd?.close();
  });

  it('get-controller-metadata: the asked replica is the controller, etcd the peer', async () => {
    const addr = cluster.addr('r2');
    const j = await cliJson<{ group: string; controllerLeaderAddress: string; isLeader: boolean; peers: string[] }>(['get-controller-metadata', '-a', addr]);
    assert.deepEqual(j, { group: '/tsmq/controller', controllerLeaderId: 'ctl-2', controllerLeaderAddress: addr, isLeader: true, peers: [etcd.endpoint] });
    const t = await runCli(['get-controller-metadata', '-a', addr]);
    assert.match(t.out, new RegExp(`#ControllerLeaderAddress\\t${addr}\\n#Peer:\\t${etcd.endpoint}`));
  });

  it('get-sync-state-set (-b and -c/-n): master, epochs and members as etcd holds them', async () => {
    const a = cluster.addr('r3');
    type Info = { masterBrokerId: number; masterAddress: string; masterEpoch: number; syncStateSetEpoch: number; inSyncReplicas: Array<{ brokerId: number; brokerAddress: string; alive: boolean }>; notInSyncReplicas: unknown[] };
    const j = await cliJson<Record<string, Info>>(['get-sync-state-set', '-a', a, '-b', 'ctl']);
    const m = v0.master!;
    assert.equal(j.ctl!.masterBrokerId, m.record.replicaId);
    assert.equal(j.ctl!.masterAddress, m.record.addr);
    assert.equal(j.ctl!.masterEpoch, m.epoch);
    assert.equal(j.ctl!.syncStateSetEpoch, v0.syncStateSet!.syncStateSetEpoch);
    assert.deepEqual(j.ctl!.inSyncReplicas.map((r) => [r.brokerId, r.brokerAddress, r.alive]), REPLICAS.map((n) => [idOf(n), cluster.addr(n), true]));
    assert.deepEqual(j.ctl!.notInSyncReplicas, []);
    await waitUntil(async () => !(await runCli(['get-sync-state-set', '-a', a, '-c', 'HaCluster', '-n', cluster.namesrvAddr])).error, 10_000, () => 'cluster never registered');
    const t = await runCli(['get-sync-state-set', '-a', a, '-c', 'HaCluster', '-n', cluster.namesrvAddr]);
    assert.match(t.out, new RegExp(`#brokerName\\tctl\\n#MasterBrokerId\\t${m.record.replicaId}\\n#MasterAddr\\t${m.record.addr}\\n#MasterEpoch\\t${m.epoch}\\n`));
    assert.match(t.out, /#SyncStateSetNums\t3/);
  });

  it('get-broker-epoch: each replica holds the master epoch from offset 0 up to its max offset', async () => {
    let j: Array<{ brokerAddr: string; brokerName: string; epochList: Array<{ epoch: number; startOffset: number; endOffset: number }>; maxOffset: number }> = [];
    await waitUntil(
      async () => {
        j = await cliJson<typeof j>(['get-broker-epoch', '-n', cluster.namesrvAddr, '-b', 'ctl']).catch(() => []);
        return j.length === 3;
      },
      10_000,
      () => `not 3 brokers: ${JSON.stringify(j)}`,
    );
    assert.deepEqual(j.map((c) => c.brokerAddr).sort(), REPLICAS.map((n) => cluster.addr(n)).sort());
    for (const c of j) assert.deepEqual(c.epochList, [{ epoch: v0.master!.epoch, startOffset: 0, endOffset: c.maxOffset }]);
    const one = await runCli(['get-broker-epoch', '--broker-addr', cluster.addr('r1')]);
    assert.match(one.out, new RegExp(`#brokerAddr\\t${cluster.addr('r1')}\\n#brokerId\\t\\d+\\n#Epoch: EpochEntry\\{epoch=${v0.master!.epoch}, startOffset=0, endOffset=\\d+\\}`));
  });

  it('elect-master moves the master to the designated replica; refuses the master itself and a dead id', async () => {
    const oldMaster = v0.master!.record.replicaId;
    const target = REPLICAS.map(idOf).find((id) => id !== oldMaster)!;
    const a = cluster.addr('r1');
    const j = await cliJson<{ masterBrokerId: number; masterAddress: string; masterEpoch: number; syncStateSetEpoch: number; brokerAddrs: Record<string, string> }>(['elect-master', '-a', a, '-c', 'HaCluster', '-B', 'ctl', '-b', String(target)]);
    const v1 = await fullSet(target);
    assert.equal(j.masterBrokerId, target);
    assert.equal(j.masterAddress, cluster.addr(REPLICAS[target - 1]!));
    assert.equal(j.masterEpoch, v1.master!.epoch);
    assert.ok(j.masterEpoch > v0.master!.epoch);
    assert.equal(j.syncStateSetEpoch, 1);
    assert.deepEqual(j.brokerAddrs, Object.fromEntries(REPLICAS.map((n) => [String(idOf(n)), cluster.addr(n)])));
    const again = await runCli(['elect-master', '-a', a, '-c', 'HaCluster', '-B', 'ctl', '-b', String(target)]);
    assert.match(again.error?.message ?? '', /code 2011 .*still alive/);
    const dead = await runCli(['elect-master', '-a', a, '-c', 'HaCluster', '-B', 'ctl', '-b', '42']);
    assert.match(dead.error?.message ?? '', /code 2012 .*replica 42 is not alive/);
    const unknown = await runCli(['elect-master', '-a', a, '-c', 'HaCluster', '-B', 'nope', '-b', '1']);
    assert.match(unknown.error?.message ?? '', /code 2010 /);
  });
});
