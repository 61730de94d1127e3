/**
 * BrokerController over real sockets with the real DefaultMessageStore and our nameserver:
 * registration, send/pull, long polling across the wire, restart with persisted metadata.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { NamesrvController } from '../../../src/namesrv/namesrv-controller.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { decodeRecord, readRecordTotalSize } from '../../../src/common/message/record-codec.js';

describe('BrokerController (sockets, real store)', { timeout: 60_000 }, () => {
  let dir: string;
  let namesrv: NamesrvController;
  let client: RemotingClient;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsmq-bc-'));
    namesrv = new NamesrvController({ listenPort: 0, logger: silentLogger });
    await namesrv.start();
    client = new RemotingClient({ logger: silentLogger });
  });

  after(async () => {
    await client.close();
    await namesrv.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  const brokerConfig = () => ({
    storePathRootDir: dir,
    listenPort: '0',
    namesrvAddr: `127.0.0.1:${namesrv.port}`,
    mappedFileSizeCommitLog: String(64 * 1024),
    mappedFileSizeConsumeQueue: String(100 * 20),
    flushConsumerOffsetInterval: '100000',
  });

  const route = async (topic: string) => {
    const r = await client.invokeSync(`127.0.0.1:${namesrv.port}`, createRequestCommand(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic }), 3000);
    return r;
  };

  const sendV2 = (addr: string, topic: string, body: string, tags = 'TagA') =>
    client.invokeSync(
      addr,
      createRequestCommand(RequestCode.SEND_MESSAGE_V2, { a: 'P', b: topic, c: 'TBW102', d: 4, e: 0, f: 0, g: Date.now(), h: 0, i: `TAGS\u0001${tags}\u0002`, j: 0, k: false }, Buffer.from(body)),
      3000,
    );

  const pull = (addr: string, topic: string, offset: number, suspendTimeoutMillis = 0, commitOffset = -1) =>
    client.invokeSync(
      addr,
      createRequestCommand(RequestCode.PULL_MESSAGE, {
        consumerGroup: 'GID_BC', topic, queueId: 0, queueOffset: offset, maxMsgNums: 32,
        sysFlag: suspendTimeoutMillis > 0 ? 7 : 5, commitOffset, suspendTimeoutMillis, subscription: '*', subVersion: 1,
      }),
      10_000,
    );

  it('registers, serves send and pull, wakes a long poll, persists metadata across a restart', async () => {
    let broker = await BrokerController.create({ brokerConfig: brokerConfig(), logger: silentLogger });
    await broker.start();
    const addr = `127.0.0.1:${broker.port}`;
    try {
      const tbw = await route('TBW102');
      assert.equal(tbw.code, ResponseCode.SUCCESS);
      assert.match(tbw.body!.toString(), new RegExp(addr.replace(/\./g, '\\.')));

      const sent = await sendV2(addr, 'BcTopic', 'hello');
      assert.equal(sent.code, ResponseCode.SUCCESS, sent.remark ?? '');
      assert.equal(Number(sent.extFields!.queueOffset), 0);
      // The auto-created topic is pushed to the nameserver by the change-triggered registration.
      let bcRoute = await route('BcTopic');
      for (let i = 0; i < 50 && !bcRoute.body?.toString().includes(addr); i++) {
        await new Promise((r) => setTimeout(r, 20));
        bcRoute = await route('BcTopic');
      }
      assert.match(bcRoute.body!.toString(), /"writeQueueNums":4/);

      const found = await pull(addr, 'BcTopic', 0);
      assert.equal(found.code, ResponseCode.SUCCESS);
      assert.equal(decodeRecord(found.body!, 0).body.toString(), 'hello');
      assert.equal(readRecordTotalSize(found.body!, 0), found.body!.length);

      const held = pull(addr, 'BcTopic', 1, 5000, 1);
      await new Promise((r) => setTimeout(r, 100));
      await sendV2(addr, 'BcTopic', 'world');
      const woken = await held;
      assert.equal(woken.code, ResponseCode.SUCCESS);
      assert.equal(decodeRecord(woken.body!, 0).body.toString(), 'world');
      assert.equal(Number(woken.extFields!.nextBeginOffset), 2);
    } finally {
      await broker.shutdown();
    }
    const gone = await route('BcTopic');
    assert.notEqual(gone.code, ResponseCode.SUCCESS, 'unregistered at shutdown');

    broker = await BrokerController.create({ brokerConfig: brokerConfig(), logger: silentLogger });
    try {
      assert.equal(broker.ctx.topicConfigManager.selectTopicConfig('BcTopic')!.writeQueueNums, 4);
      assert.equal(broker.ctx.consumerOffsetManager.queryOffset('GID_BC', 'BcTopic', 0), 1, 'commitOffset from the pull persisted');
      assert.equal(broker.ctx.store.getMaxOffsetInQueue('BcTopic', 0), 2);
    } finally {
      await broker.shutdown();
    }
  });
});
