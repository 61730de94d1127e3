/**
 * A deleted topic's pop state goes with it, and a group's with its offsets (soak finding: the pop state table kept a queue state
 * per group and queue of every topic ever popped from, in memory and in every pop snapshot, after
 * the topic was deleted; Apache drops a deleted topic's offsets and pop in-flight counts). Over the
 * wire on a real broker: POP_MESSAGE from two topics, DELETE_TOPIC_IN_BROKER of one; its pop state
 * is gone (also after a restart: a FORGET record in the pop log; a crash right after the deletion:
 * test/unit/grpc/pop-state-forget-crash.test.ts), the other topic's
 * stays, and the deleted topic created again pops from its start as a new topic. A group deleted
 * with cleanOffset (DELETE_SUBSCRIPTIONGROUP, `mqadmin deleteSubGroup -r true`) loses its pop state
 * on every topic (Apache: removeOffset + clearInFlightMessageNumByGroupName); without cleanOffset
 * it keeps it, as its offsets.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerController } from '../../src/broker/broker-controller.js';
import { RemotingClient } from '../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../src/remoting/codes/response-code.js';
import { encodeProperties } from '../../src/common/message/properties.js';
import { silentLogger } from '../../src/common/logging/logger.js';
import { removeDir, tempDir } from '../support/store-fixtures.js';

const GONE = 'PopDeletedT';
const KEPT = 'PopKeptT';
const GROUP = 'GID_POP_DEL';
const GROUP2 = 'GID_POP_DEL2';

describe('a deleted topic loses its pop state', { timeout: 60_000 }, () => {
  const dir = tempDir('tsmq-pop-topic-delete-');
  const client = new RemotingClient({ logger: silentLogger });
  let broker: BrokerController | null = null;

  after(async () => {
    await broker?.shutdown();
    await client.close();
    removeDir(dir);
  });

  const start = async (): Promise<{ b: BrokerController; addr: string }> => {
    const b = await BrokerController.create({ brokerConfig: { storePathRootDir: dir, listenPort: '0', namesrvAddr: '', mappedFileSizeCommitLog: String(1024 * 1024) }, logger: silentLogger });
    await b.start();
    broker = b;
    return { b, addr: `127.0.0.1:${b.port}` };
  };
  const invoke = async (addr: string, code: number, header: Parameters<typeof createRequestCommand>[1], body?: Buffer) => {
    const r = await client.invokeSync(addr, createRequestCommand(code, header, body), 5000);
    assert.equal(r.code, ResponseCode.SUCCESS, `${code}: ${r.remark ?? ''}`);
    return r;
  };
  const createTopic = (addr: string, topic: string) =>
    invoke(addr, RequestCode.UPDATE_AND_CREATE_TOPIC, { topic, defaultTopic: 'TBW102', readQueueNums: 2, writeQueueNums: 2, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false });
  const send = (addr: string, topic: string, queueId: number, key: string) =>
    invoke(addr, RequestCode.SEND_MESSAGE_V2, { a: 'PID_POP_DEL', b: topic, c: 'TBW102', d: 2, e: queueId, f: 0, g: Date.now(), h: 0, i: encodeProperties(new Map([['KEYS', key], ['UNIQ_KEY', `U-${key}`], ['WAIT', 'true']])), j: 0, k: false }, Buffer.from(key));
  const pop = (addr: string, topic: string, group = GROUP) =>
    invoke(addr, RequestCode.POP_MESSAGE, { consumerGroup: group, topic, queueId: -1, maxMsgNums: 32, invisibleTime: 60_000, pollTime: 0, bornTime: Date.now(), initMode: 0, expType: 'TAG', exp: '*', order: false });

  it('drops the pop state of the deleted topic only, durably', async () => {
    let { b, addr } = await start();
    for (const t of [GONE, KEPT]) {
      await createTopic(addr, t);
      await send(addr, t, 0, `${t}-0`);
      await send(addr, t, 1, `${t}-1`);
      // pops until both messages were handed out (a pop visits the queues in turn)
      for (let i = 0; i < 4 && (b.popService.popStartOffset(GROUP, t, 0) < 0 || b.popService.popStartOffset(GROUP, t, 1) < 0); i++) await pop(addr, t);
      assert.ok(b.popService.hasPopState(GROUP, t), `pop state of ${t}`);
    }

    await invoke(addr, RequestCode.DELETE_TOPIC_IN_BROKER, { topic: GONE });
    const deadline = Date.now() + 10_000;
    while (b.popService.hasPopState(GROUP, GONE) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(b.popService.hasPopState(GROUP, GONE), false, 'the deleted topic has no pop state');
    assert.equal(b.popService.hasPopState(GROUP, KEPT), true, 'the other topic keeps its pop state');
    assert.equal(b.popService.popStartOffset(GROUP, KEPT, 0), 0, 'its delivery in flight is still in flight');

    // durable: a restart replays a snapshot without it
    await b.shutdown();
    broker = null;
    ({ b, addr } = await start());
    assert.equal(b.popService.hasPopState(GROUP, GONE), false, 'still none after a restart');
    assert.equal(b.popService.hasPopState(GROUP, KEPT), true);

    // created again: a new topic for the group (its queues start empty, popped from offset 0)
    await createTopic(addr, GONE);
    await send(addr, GONE, 0, 'again');
    const r = await pop(addr, GONE);
    assert.ok((r.body?.length ?? 0) > 0, 'the message of the new topic is popped');
  });

  it('drops the pop state of a group deleted with its offsets, on every topic', async () => {
    assert.ok(broker, 'the broker of the first test is still up');
    const b = broker!;
    const addr = `127.0.0.1:${b.port}`;
    await pop(addr, KEPT, GROUP2);
    assert.ok(b.popService.hasPopState(GROUP2, KEPT));
    // without cleanOffset: the offsets stay, so does the pop state
    await invoke(addr, RequestCode.DELETE_SUBSCRIPTIONGROUP, { groupName: GROUP2, cleanOffset: false });
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(b.popService.hasPopState(GROUP2, KEPT), 'kept without cleanOffset');
    await invoke(addr, RequestCode.DELETE_SUBSCRIPTIONGROUP, { groupName: GROUP2, cleanOffset: true });
    const deadline = Date.now() + 10_000;
    while (b.popService.hasPopState(GROUP2, KEPT) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(b.popService.hasPopState(GROUP2, KEPT), false, 'gone with cleanOffset');
    assert.equal(b.popService.hasPopState(GROUP, KEPT), true, 'the other group keeps its pop state');
  });
});
