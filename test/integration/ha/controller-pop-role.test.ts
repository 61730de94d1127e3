/**
 * Pop consumption follows the replica's role in controller mode, as Apache runs its pop revive
 * service (and the ack / checkpoint write-back) on the master only
 * (BrokerController.changeSpecialServiceStatus → setPopReviveServiceStatus), and a replica holds
 * its master's pop state (Apache: pop checkpoints and acks are revive-topic messages in the
 * replicated CommitLog; tsmq: GET_ALL_POP_STATE, src/broker/pop/pop-state-sync.ts). Real processes:
 * etcd + `tsmq namesrv` + 2 controller-mode replicas; pops and acks are raw POP_MESSAGE /
 * ACK_MESSAGE frames (what Apache's 5.x remoting client sends); the master is moved with
 * `tsmq admin elect-master`.
 *
 *   master A: 5 messages, all popped (invisible 8 s), 0 and 1 acked
 *   slave B:  pops nothing (it would otherwise hand out 2..4 from its replica)
 *   B elected: 2..4 are still in flight (A's pop state): nothing is handed out before their
 *              invisible time ends (before pop state replication: 2..4 at once, delivered twice);
 *              A's delivery of 2 is acked on B with A's ack data; after the invisible time B
 *              hands out 3, 4 as second attempts; 3 acked there
 *   A demoted: pops nothing
 *   A elected again: hands out only 4, as the third attempt, once B's invisible time ended
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { registerAdminToolCommands } from '../../../src/cli/commands/admin-commands.js';
import { EtcdGroupStore, type GroupView } from '../../../src/broker/controller/etcd-group-store.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { decodeRecord, readRecordTotalSize } from '../../../src/common/message/record-codec.js';
import { EtcdServer, etcdSkipReason } from '../../support/etcd-server.js';
import { consumerOffsets, createTopic, HaCluster, queueMaxOffsets, waitUntil } from '../../support/ha-cluster.js';
import { rawInvoke, sendV2Frame, type RawReply } from '../../support/raw-remoting.js';

const REPLICAS = ['r1', 'r2'];
const TOPIC = 'CtlPopRole';
const GROUP = 'GID_CTL_POP';
const BROKER_NAME = 'ctlpop';

async function electMaster(askAddr: string, replicaId: number): Promise<void> {
  const program = new Command().exitOverride();
  registerAdminToolCommands(program);
  const log = console.log;
  console.log = () => undefined;
  try {
    await program.parseAsync(['node', 'tsmq', 'admin', 'elect-master', '-a', askAddr, '-c', 'HaCluster', '-B', BROKER_NAME, '-b', String(replicaId), '--json']);
  } finally {
    console.log = log;
  }
}

interface Popped {
  reply: RawReply;
  offsets: number[];
  attempts: number[];
}

async function pop(addr: string, invisibleMs = 1000): Promise<Popped> {
  const reply = await rawInvoke(addr, {
    code: RequestCode.POP_MESSAGE,
    extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: '-1', maxMsgNums: '32', invisibleTime: String(invisibleMs), pollTime: '0', bornTime: String(Date.now()), initMode: '0', expType: 'TAG', exp: '*', order: 'false' },
  });
  const offsets: number[] = [];
  const attempts: number[] = [];
  if (reply.header.code === ResponseCode.SUCCESS) {
    for (let at = 0; at < reply.body.length; at += readRecordTotalSize(reply.body, at)) {
      const m = decodeRecord(reply.body, at);
      offsets.push(m.queueOffset);
      attempts.push(m.reconsumeTimes + 1);
    }
  }
  return { reply, offsets, attempts };
}

async function ack(addr: string, p: Popped, offset: number): Promise<void> {
  const h = p.reply.header.extFields!;
  const start = h.startOffsetInfo!.split(';').map((e) => e.split(' ')).find((f) => Number(f[1]) === 0)![2];
  const extraInfo = `${start} ${h.popTime} ${h.invisibleTime} ${h.reviveQid} 0 ${BROKER_NAME} 0 ${offset}`;
  const r = await rawInvoke(addr, { code: RequestCode.ACK_MESSAGE, extFields: { consumerGroup: GROUP, topic: TOPIC, queueId: '0', offset: String(offset), extraInfo } });
  assert.equal(r.header.code, ResponseCode.SUCCESS, `ack ${offset} on ${addr}: ${r.header.remark}`);
}

describe('pop follows the controller-mode role (Apache: revive on the master only)', { skip: etcdSkipReason() ?? false, timeout: 120_000 }, () => {
  let etcd: EtcdServer;
  let cluster: HaCluster;
  let group: EtcdGroupStore;
  const idOf = (name: string): number => REPLICAS.indexOf(name) + 1;
  const nameOf = (id: number): string => REPLICAS[id - 1]!;

  async function fullSet(masterId?: number): Promise<GroupView> {
    let v: GroupView | null = null;
    await waitUntil(
      async () => {
        v = await group.view().catch(() => null);
        return !!v?.master && v.master.record.epochs !== null && (masterId === undefined || v.master.record.replicaId === masterId) && v.syncStateSet?.masterEpoch === v.master.epoch && v.syncStateSet.members.length === REPLICAS.length;
      },
      30_000,
      () => `no full sync state set: ${JSON.stringify(v)}\n${cluster.logs(2000)}`,
    );
    return v!;
  }

  /** Waits until `name` holds the 5 messages and the group's consumer offset `offset` (slave synchronize). */
  async function synced(name: string, offset: number): Promise<void> {
    let seen: unknown[] = [];
    await waitUntil(
      async () => {
        const max = await queueMaxOffsets(cluster.addr(name), TOPIC, 1);
        const committed = await consumerOffsets(cluster.addr(name), GROUP, TOPIC, 1);
        seen = [max, committed];
        return max[0] === 5 && committed[0] === offset;
      },
      20_000,
      () => `${name} not synced to offset ${offset}: ${JSON.stringify(seen)}\n${cluster.logs(2000)}`,
    );
  }

  before(async () => {
    etcd = await EtcdServer.start();
    cluster = await HaCluster.start();
    group = new EtcdGroupStore([etcd.endpoint], '/tsmq/controller', 'HaCluster', BROKER_NAME, 2000);
    for (const n of REPLICAS) {
      await cluster.startBroker({ name: n, brokerName: BROKER_NAME, brokerId: idOf(n), brokerRole: 'SLAVE', conf: { enableControllerMode: 'true', etcdEndpoints: etcd.endpoint, registerNameServerPeriod: '1000', slaveSynchronizeInterval: '300' } });
    }
  });

  after(async () => {
    group?.close();
    await cluster?.close();
    await etcd?.close();
  });

  it('slave and demoted master pop nothing; a promoted replica continues the pop state of the old master', async () => {
    const a = nameOf((await fullSet()).master!.record.replicaId);
    const b = REPLICAS.find((n) => n !== a)!;
    await createTopic(cluster.addr(a), TOPIC, 1);
    for (let i = 0; i < 5; i++) assert.equal((await sendV2Frame(cluster.addr(a), TOPIC, Buffer.from(`m${i}`))).header.code, ResponseCode.SUCCESS);

    const onA = await pop(cluster.addr(a), 8000);
    assert.deepEqual(onA.offsets, [0, 1, 2, 3, 4]);
    const invisibleUntil = Number(onA.reply.header.extFields!.popTime) + 8000;
    await ack(cluster.addr(a), onA, 0);
    await ack(cluster.addr(a), onA, 1);
    await synced(b, 2);
    await new Promise((r) => setTimeout(r, 1000)); // B's pop state sync runs every 300 ms here

    const onSlave = await pop(cluster.addr(b));
    assert.equal(onSlave.reply.header.code, ResponseCode.POLLING_TIMEOUT, `the slave handed out ${JSON.stringify(onSlave.offsets)}`);

    await electMaster(cluster.addr(a), idOf(b));
    await fullSet(idOf(b));
    const early = await pop(cluster.addr(b));
    assert.ok(Date.now() < invisibleUntil - 200, `the election took too long for this check (${invisibleUntil - Date.now()} ms of invisibility left)`);
    assert.equal(early.reply.header.code, ResponseCode.POLLING_TIMEOUT, `B handed out A's in-flight messages ${JSON.stringify(early.offsets)} again`);
    await ack(cluster.addr(b), onA, 2); // the old master's delivery, acked at the new master

    await new Promise((r) => setTimeout(r, invisibleUntil + 200 - Date.now()));
    const onB = await pop(cluster.addr(b));
    assert.deepEqual(onB.offsets, [3, 4], 'A acked 0, 1; 2 acked on B');
    assert.deepEqual(onB.attempts, [2, 2], 'A delivered them once');
    await ack(cluster.addr(b), onB, 3);
    await synced(a, 4);

    const onDemoted = await pop(cluster.addr(a));
    assert.equal(onDemoted.reply.header.code, ResponseCode.POLLING_TIMEOUT, `the demoted master handed out ${JSON.stringify(onDemoted.offsets)}`);

    await new Promise((r) => setTimeout(r, 1000)); // A holds B's pop state; B's delivery of 4 (1 s) ends
    await electMaster(cluster.addr(b), idOf(a));
    await fullSet(idOf(a));
    const back = await pop(cluster.addr(a));
    assert.deepEqual(back.offsets, [4], 'what B acked (2, 3) is not handed out again');
    assert.deepEqual(back.attempts, [3], 'A and B delivered 4 once each');
  });
});
