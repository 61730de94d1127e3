/**
 * A client-chosen hold time is cut to maxLongPollingTimeMills (tsmq bound; Apache holds the
 * client's value): PULL suspendTimeoutMillis, POP_MESSAGE and NOTIFICATION pollTime. Without the
 * bound a client asking for a hold of days (or beyond Node's 2^31-1 ms timer, which would fire
 * at once and spin) pins its request until the connection closes, and one re-sending after its
 * own timeout piles up held requests.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import assert from 'node:assert/strict';
import { BrokerHarness, FakeChannel } from './support/broker-harness.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { resolveBrokerConfig } from '../../../src/broker/broker-config.js';

let h: BrokerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('maxLongPollingTimeMills', () => {
  it('defaults to 60000', () => {
    assert.equal(resolveBrokerConfig({}).maxLongPollingTimeMills, 60000);
  });

  it('PULL: suspendTimeoutMillis of a day is held only maxLongPollingTimeMills, then PULL_NOT_FOUND and nothing stays held', async () => {
    h = await BrokerHarness.create({ config: { maxLongPollingTimeMills: '150' } });
    h.ctx.topicConfigManager.createTopicInSendMessageBackMethod('TB', 1, 6, 0);
    const ch = new FakeChannel('127.0.0.1:50100');
    const t0 = Date.now();
    assert.equal(await h.pull('GB', 'TB', 0, 0, { channel: ch, suspendTimeoutMillis: 86_400_000 }), null, 'held');
    assert.equal(h.broker.pullRequestHoldService.size, 1);
    const r = await ch.nextSent();
    const heldMs = Date.now() - t0;
    assert.equal(r.code, ResponseCode.PULL_NOT_FOUND);
    assert.ok(heldMs >= 140 && heldMs < 2000, `held ${heldMs} ms`);
    assert.equal(h.broker.pullRequestHoldService.size, 0);
  });

  describe('on a started broker (pops wait only while it runs)', () => {
    let dir = '';
    let broker: BrokerController | undefined;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'tsmq-lpb-'));
      broker = await BrokerController.create({
        brokerConfig: { storePathRootDir: dir, listenPort: '0', namesrvAddr: '', maxLongPollingTimeMills: '150', mappedFileSizeCommitLog: String(1024 * 1024) },
        logger: silentLogger,
      });
      await broker.start();
      broker.ctx.topicConfigManager.createTopicInSendMessageBackMethod('TP', 1, 6, 0);
    });
    after(async () => {
      await broker?.shutdown();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });
    const call = async (code: number, ext: Record<string, string | number | boolean>): Promise<RemotingCommand> => {
      const r = await broker!.handlerFor(code)!({ channel: new FakeChannel('127.0.0.1:50101'), request: createRequestCommand(code, ext, null) });
      assert.ok(r);
      return r;
    };

    it('POP_MESSAGE: pollTime of a day is held only maxLongPollingTimeMills, then POLLING_TIMEOUT', async () => {
      const t0 = Date.now();
      const r = await call(RequestCode.POP_MESSAGE, {
        consumerGroup: 'GP', topic: 'TP', queueId: -1, maxMsgNums: 32, invisibleTime: 60000, pollTime: 86_400_000, bornTime: Date.now(), initMode: 0, expType: 'TAG', exp: '*', order: false,
      });
      const heldMs = Date.now() - t0;
      assert.equal(r.code, ResponseCode.POLLING_TIMEOUT, r.remark ?? '');
      assert.ok(heldMs >= 140 && heldMs < 2000, `held ${heldMs} ms`);
    });

    it('NOTIFICATION: pollTime of a day is held only maxLongPollingTimeMills, then hasMsg=false', async () => {
      const t0 = Date.now();
      const r = await call(RequestCode.NOTIFICATION, { consumerGroup: 'GP', topic: 'TP', queueId: -1, pollTime: 86_400_000, bornTime: Date.now() });
      const heldMs = Date.now() - t0;
      assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
      assert.equal(String(r.extFields!.hasMsg), 'false');
      assert.ok(heldMs >= 140 && heldMs < 2000, `held ${heldMs} ms`);
    });
  });
});
