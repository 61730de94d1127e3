/**
 * Apache RocketMQ 5.3.3 mqadmin's controller commands against a real controller-mode group:
 * etcd + `tsmq namesrv` + 3 `tsmq broker` replicas (enableControllerMode, allAckInSyncStateSet).
 * `-a` is a SLAVE replica's address (every replica answers controller requests from etcd).
 * One JVM runs, in order: getControllerMetaData, getSyncStateSet, getBrokerEpoch, brokerStatus of
 * the master and of a slave (commitLogConfirmOffset, tsmq's runtime key), electMaster
 * of another slave, getSyncStateSet, electMaster of the new master again (2011), electMaster of
 * an unknown replica (2012), then after a pause getBrokerEpoch and getSyncStateSet. The printed
 * values are checked against etcd's state read by the test: controller address and etcd peer,
 * master id / address / epoch, sync state set members and epoch, every replica's epoch list
 * (epoch, start offset, end offset = its max offset), the elected master and its new epoch.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EtcdGroupStore, type GroupView } from '../../src/broker/controller/etcd-group-store.js';
import { EtcdServer, etcdSkipReason } from '../support/etcd-server.js';
import { createTopic, HaCluster, waitUntil } from '../support/ha-cluster.js';
import { LeanClient } from '../support/lean-client.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type JavaRun } from './support/java-peers.js';

const REPLICAS = ['r1', 'r2', 'r3'];
const TOPIC = 'CtlAdminTopic';
const skip = javaSkipReason() || etcdSkipReason() || false;

describe('mqadmin 5.3.3 controller commands against a tsmq controller-mode group', { skip, timeout: 180_000 }, () => {
  let etcd: EtcdServer;
  let cluster: HaCluster;
  let group: EtcdGroupStore;
  let before0: GroupView;
  let after1: GroupView;
  let run: JavaRun;
  let slave: string;
  let designated: number;
  const idOf = (name: string): number => REPLICAS.indexOf(name) + 1;
  const out = (cmd: string, nth = 0): string => (run.lines.filter((l) => l.type === 'mqadmin' && l.cmd === cmd)[nth]?.output as string) ?? '';

  async function fullSet(timeoutMs: number, masterId?: number): Promise<GroupView> {
    let v: GroupView | null = null;
    await waitUntil(
      async () => {
        v = await group.view().catch(() => null);
        return !!v?.master && v.master.record.epochs !== null && (masterId === undefined || v.master.record.replicaId === masterId) && v.syncStateSet?.masterEpoch === v.master.epoch && v.syncStateSet.members.length === 3;
      },
      timeoutMs,
      () => `sync state set never got all replicas: ${JSON.stringify(v)}\n${cluster.logs(3000)}`,
    );
    return v!;
  }

  before(async () => {
    const peer = buildPeer('rocketmq5');
    etcd = await EtcdServer.start();
    cluster = await HaCluster.start();
    group = new EtcdGroupStore([etcd.endpoint], '/tsmq/controller', 'HaCluster', 'ctl', 2000);
    for (const n of REPLICAS) {
      await cluster.startBroker({
        name: n,
        brokerName: 'ctl',
        brokerId: idOf(n),
        brokerRole: 'SLAVE',
        conf: { enableControllerMode: 'true', etcdEndpoints: etcd.endpoint, allAckInSyncStateSet: 'true', registerNameServerPeriod: '1000' },
      });
    }
    before0 = await fullSet(30_000);
    for (const n of REPLICAS) await createTopic(cluster.addr(n), TOPIC, 2);
    const c = new LeanClient(before0.master!.record.addr);
    await c.ready;
    for (let i = 0; i < 20; i++) assert.equal((await c.send(TOPIC, i % 2, Buffer.from(`m${i}`), { WAIT: 'true' }, 3000)).code, 0);
    c.close();
    before0 = await fullSet(10_000);
    const masterId = before0.master!.record.replicaId;
    const slaves = REPLICAS.filter((n) => idOf(n) !== masterId);
    slave = cluster.addr(slaves[0]!);
    designated = idOf(slaves[1]!);
    // every replica registered with the nameserver (getBrokerEpoch reads the addresses from there)
    await new Promise((r) => setTimeout(r, 1500));
    const ns = cluster.namesrvAddr;
    const a = ['-a', slave];
    const elect = (id: number): string[] => ['electMaster', ...a, '-c', 'HaCluster', '-bn', 'ctl', '-b', String(id)];
    run = await runJava(await peer, 'tsmq.interop.MqadminPeer5', [
      ...['getControllerMetaData', ...a, '--'],
      ...['getSyncStateSet', ...a, '-b', 'ctl', '--'],
      ...['getBrokerEpoch', '-n', ns, '-b', 'ctl', '--'],
      ...['brokerStatus', '-b', before0.master!.record.addr, '--'],
      ...['brokerStatus', '-b', slave, '--'],
      ...elect(designated), '--',
      ...['getSyncStateSet', ...a, '-b', 'ctl', '--'],
      ...elect(designated), '--',
      ...elect(99), '--',
      ...['sleep', '4000', '--'],
      ...['getBrokerEpoch', '-n', ns, '-b', 'ctl', '--'],
      ...['getSyncStateSet', ...a, '-b', 'ctl'],
    ], { timeoutMs: 120_000 });
    assertRanOk(run, 'MqadminPeer5');
    if (process.env.TSMQ_SHOW_MQADMIN) for (const l of run.lines) console.log(`$ mqadmin ${String(l.cmd)} ${String(l.args)} (${String(l.ms)} ms)\n${String(l.output)}`);
    after1 = await fullSet(15_000, designated);
  });

  after(async () => {
    group?.close();
    await cluster?.close();
    await etcd?.close();
  });

  it('getControllerMetaData: the replica answers as the controller, etcd as the peers', () => {
    const o = out('getControllerMetaData');
    assert.match(o, /#ControllerGroup\t\/tsmq\/controller/);
    assert.match(o, new RegExp(`#ControllerLeaderAddress\\t${slave}\\b`));
    assert.match(o, new RegExp(`#Peer:\\t${etcd.endpoint}`));
  });

  it('getSyncStateSet: master id, address, epoch and the 3 in-sync replicas from etcd', () => {
    const o = out('getSyncStateSet');
    const m = before0.master!;
    assert.match(o, /#brokerName\tctl/);
    assert.match(o, new RegExp(`#MasterBrokerId\\t${m.record.replicaId}\\n`));
    assert.match(o, new RegExp(`#MasterAddr\\t${m.record.addr}\\n`));
    assert.match(o, new RegExp(`#MasterEpoch\\t${m.epoch}\\n`));
    assert.match(o, new RegExp(`#SyncStateSetEpoch\\t${before0.syncStateSet!.syncStateSetEpoch}\\n`));
    assert.match(o, /#SyncStateSetNums\t3\n/);
    for (const n of REPLICAS) {
      assert.match(o, new RegExp(`InSyncReplica:\\tReplicaIdentity\\{brokerName='ctl', brokerId=${idOf(n)}, brokerAddress='${cluster.addr(n)}', alive=true\\}`));
    }
    assert.doesNotMatch(o, /NotInSyncReplica/);
  });

  it('getBrokerEpoch: every replica reports the master epoch from its epoch file, ending at its max offset', () => {
    const o = out('getBrokerEpoch');
    const m = before0.master!;
    const start = m.record.epochs!.at(-1)!.startOffset;
    for (const n of REPLICAS) assert.match(o, new RegExp(`#brokerAddr\\t${cluster.addr(n)}\\n`));
    const entries = [...o.matchAll(/#Epoch: EpochEntry\{epoch=(\d+), startOffset=(\d+), endOffset=(\d+)\}/g)];
    assert.equal(entries.length, 3, o);
    for (const e of entries) {
      assert.equal(Number(e[1]), m.epoch);
      assert.equal(Number(e[2]), start);
      assert.ok(Number(e[3]) > start, `end offset ${e[3]} must be past the 20 messages`);
    }
    assert.equal(new Set(entries.map((e) => e[3])).size, 1, `replicas hold the same max offset: ${o}`);
  });

  it('brokerStatus: commitLogConfirmOffset of master and slave is the confirmed end of the 20 messages (all 3 replicas acked)', () => {
    const kv = (o: string): Map<string, string> => new Map(o.split('\n').filter((l) => l.includes(':')).map((l) => [l.slice(0, l.indexOf(':')).trim(), l.slice(l.indexOf(':') + 1).trim()]));
    const m = kv(out('brokerStatus', 0));
    const s = kv(out('brokerStatus', 1));
    const end = before0.master!.record.epochs!.at(-1)!.startOffset;
    assert.ok(m.has('commitLogConfirmOffset'), out('brokerStatus', 0));
    assert.equal(m.get('commitLogConfirmOffset'), m.get('commitLogMaxOffset'), 'master: every sync-state-set member acked everything');
    assert.ok(Number(m.get('commitLogConfirmOffset')) > end, `past the epoch start ${end}`);
    assert.equal(s.get('commitLogConfirmOffset'), m.get('commitLogConfirmOffset'), "slave: the master's confirm offset (HA confirm frame)");
    assert.equal(s.get('commitLogMaxOffset'), m.get('commitLogMaxOffset'));
  });

  it('electMaster: the designated slave becomes master with a new epoch, the old master rejoins', () => {
    const o = out('electMaster', 0);
    const m = after1.master!;
    assert.equal(m.record.replicaId, designated);
    assert.ok(m.epoch > before0.master!.epoch);
    assert.match(o, /#ClusterName\tHaCluster/);
    assert.match(o, new RegExp(`#BrokerMasterAddr\\t${m.record.addr}\\n`));
    assert.match(o, new RegExp(`#MasterEpoch\\t${m.epoch}\\n`));
    assert.match(o, /#SyncStateSetEpoch\t1\n/);
    for (const n of REPLICAS) assert.match(o, new RegExp(`\\t#Broker\\t${idOf(n)}\\t${cluster.addr(n)}\\n`));
    const s = out('getSyncStateSet', 1);
    assert.match(s, new RegExp(`#MasterBrokerId\\t${designated}\\n`));
    assert.match(s, new RegExp(`#MasterEpoch\\t${m.epoch}\\n`));
    const s2 = out('getSyncStateSet', 2);
    assert.match(s2, new RegExp(`#MasterBrokerId\\t${designated}\\n`));
    assert.match(s2, /#SyncStateSetNums\t3\n/);
  });

  it('electMaster refusals: the master itself (2011), an unknown replica (2012)', () => {
    assert.match(out('electMaster', 1), /CODE: 2011\s+DESC: The old master \d+ is still alive/);
    assert.match(out('electMaster', 2), /CODE: 2012\s+DESC: Failed to elect a new master: replica 99 is not alive/);
  });

  it('getBrokerEpoch after the election: both epochs, the new one starting where the old one ends', () => {
    const o = out('getBrokerEpoch', 1);
    const e0 = before0.master!.epoch;
    const e1 = after1.master!.epoch;
    const start1 = after1.master!.record.epochs!.at(-1)!.startOffset;
    for (const n of REPLICAS) assert.match(o, new RegExp(`#brokerAddr\\t${cluster.addr(n)}\\n`));
    const blocks = o.split('#clusterName').slice(1);
    assert.equal(blocks.length, 3, o);
    for (const b of blocks) {
      assert.match(b, new RegExp(`#Epoch: EpochEntry\\{epoch=${e0}, startOffset=\\d+, endOffset=${start1}\\}`));
      assert.match(b, new RegExp(`#Epoch: EpochEntry\\{epoch=${e1}, startOffset=${start1}, endOffset=\\d+\\}`));
    }
  });
});
