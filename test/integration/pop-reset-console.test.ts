/**
 * The console's "reset offset" (ConsoleActions.resetOffsetByTime → INVOKE_BROKER_TO_RESET_OFFSET
 * through the broker's own handler table) on a pop group: an in-process BrokerController, pops
 * and acks through `broker.popService` (what the gRPC and remoting fronts call). Backwards the
 * same messages come again; forwards (-1) nothing that was not consumed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerController } from '../../src/broker/broker-controller.js';
import { silentLogger } from '../../src/common/logging/logger.js';
import { ConsoleActions } from '../../src/console/console-actions.js';
import { RequestCode } from '../../src/remoting/codes/request-code.js';
import { createRequestCommand } from '../../src/remoting/protocol/commands.js';
import { invokeInProcess } from '../../src/console/in-process-request.js';

const TOPIC = 'PopConsoleT';
const GROUP = 'PopConsoleG';

describe('console reset offset of a pop group (in-process broker)', { timeout: 30_000 }, () => {
  let dir: string;
  let broker: BrokerController;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsmq-popreset-console-'));
    broker = await BrokerController.create({
      brokerConfig: { storePathRootDir: dir, listenPort: '0', namesrvAddr: '', brokerName: 'broker-c', mappedFileSizeCommitLog: String(1024 * 1024) },
      logger: silentLogger,
    });
    await broker.start();
    const created = await invokeInProcess(broker, createRequestCommand(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: TOPIC, readQueueNums: 1, writeQueueNums: 1, perm: 6 }));
    assert.equal(created.code, 0, created.remark ?? '');
  });

  after(async () => {
    await broker?.shutdown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const send = async (body: string): Promise<void> => {
    const r = await invokeInProcess(
      broker,
      createRequestCommand(RequestCode.SEND_MESSAGE_V2, { a: 'P', b: TOPIC, c: 'TBW102', d: 1, e: 0, f: 0, g: Date.now(), h: 0, i: 'TAGS\u0001TagA\u0002', j: 0, k: false }, Buffer.from(body)),
    );
    assert.equal(r.code, 0, r.remark ?? '');
  };

  const popAndAck = async (): Promise<string[]> => {
    const r = await broker.popService.pop({ group: GROUP, topic: TOPIC, filter: null, batchSize: 32, invisibleMs: 60_000, fifo: false });
    for (const m of r.messages) assert.equal((await broker.popService.ack(GROUP, m.receiptHandle)).ok, true);
    return r.messages.map((m) => m.message.body.toString());
  };

  it('backwards replays the consumed messages, -1 skips the unconsumed ones', async () => {
    const t0 = Date.now() - 1;
    for (const b of ['c0', 'c1', 'c2']) await send(b);
    assert.deepEqual(await popAndAck(), ['c0', 'c1', 'c2']);
    const actions = new ConsoleActions(broker);
    assert.deepEqual(await actions.resetOffsetByTime(GROUP, TOPIC, t0), { 0: 0 });
    assert.deepEqual(await popAndAck(), ['c0', 'c1', 'c2'], 'replayed');
    await send('c3');
    assert.deepEqual(await actions.resetOffsetByTime(GROUP, TOPIC, -1), { 0: 4 });
    assert.deepEqual(await popAndAck(), [], 'c3 skipped');
    await send('c4');
    assert.deepEqual(await popAndAck(), ['c4']);
  });
});
