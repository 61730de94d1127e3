import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import type { StoreConfig } from '../../../src/store/store-config.js';
import { freePort, RawHAPeer, readCommitLog, waitUntil } from '../../support/ha-cluster.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function root(): string {
  const dir = tempDir('tsmq-ha-case-');
  cleanups.push(() => removeDir(dir));
  return dir;
}

async function open(dir: string, extra: Partial<StoreConfig>, clock = new ManualClock(1_700_000_000_000)): Promise<DefaultMessageStore> {
  const store = await openStore(smallConfig(dir, extra), { clock });
  cleanups.push(() => store.shutdown());
  return store;
}

describe('HA cases', () => {
  it('B32 a bogus ack beyond the master max closes the connection and releases no waiter', async () => {
    const m = await open(root(), { brokerRole: 'SYNC_MASTER', mappedFileSizeCommitLog: 65536, slaveTimeout: 400 });
    // two records of 2500 bytes: CommitLog max 5000
    const probe = await m.putMessage(makeMessage({ body: Buffer.alloc(100, 1), properties: { WAIT: 'false' } }));
    const overhead = probe.appendResult!.wroteBytes - 100;
    await m.truncateFiles(0); // start from an empty log (same store, same record overhead)
    assert.equal(m.getMaxPhyOffset(), 0);
    for (let i = 0; i < 2; i++) assert.equal((await m.putMessage(makeMessage({ body: Buffer.alloc(2500 - overhead, 2), properties: { WAIT: 'false' } }))).status, 'PUT_OK');
    assert.equal(m.getMaxPhyOffset(), 5000);
    const ha = await m.startHA({ listenPort: 0, host: '127.0.0.1' });
    const service = ha.master!;

    const bogus = await RawHAPeer.connect(service.port);
    bogus.report(1_000_000);
    await bogus.closedPromise;
    assert.deepEqual([...bogus.received], [0, 0, 0, 0, 0, 0, 0x13, 0x88, 0, 0, 0, 0], 'one heartbeat with the master max 5000, then close');
    assert.equal(service.getPush2SlaveMaxOffset(), 0, 'slave-acked offset not advanced');
    assert.equal(service.slaveCount(), 0);
    const send = await m.putMessage(makeMessage({ body: 'needs a slave ack' }));
    assert.equal(send.status, 'SLAVE_NOT_AVAILABLE');
    assert.ok(send.appendResult, 'stored on the master');

    // an established connection that later acks beyond the master max: closed, its waiter times out
    const peer = await RawHAPeer.connect(service.port);
    cleanups.push(() => peer.destroy());
    peer.report(0);
    await waitUntil(() => service.slaveCount() === 1, 2000, () => 'peer counted');
    const pending = m.putMessage(makeMessage({ body: 'waits' }));
    await waitUntil(() => service.stats().pendingWaiters === 1, 2000, () => 'waiter queued');
    peer.report(1_000_000);
    await peer.closedPromise;
    assert.equal((await pending).status, 'FLUSH_SLAVE_TIMEOUT');
    assert.equal(service.getPush2SlaveMaxOffset(), 0);
  });

  it('B33 the slave checkpoint physic timestamp follows replicated store times; abnormal recovery starts at the last CL file', async () => {
    const T1 = 1_700_000_000_000;
    const T2 = T1 + 10_000;
    const T3 = T1 + 20_000;
    const clock = new ManualClock(T1);
    const m = await open(root(), { brokerRole: 'ASYNC_MASTER' }, clock);
    const put = async (ts: number, i: number): Promise<number> => {
      clock.set(ts);
      const r = await m.putMessage(makeMessage({ body: Buffer.alloc(1000, i), properties: { WAIT: 'false' } }));
      assert.equal(r.status, 'PUT_OK');
      return r.appendResult!.wroteOffset;
    };
    for (let i = 0; i < 3; i++) await put(T1, i);
    assert.equal(await put(T2, 3), 4096, 'T2 opens the second file');
    await put(T3, 4);
    const ha = await m.startHA({ listenPort: 0, host: '127.0.0.1' });
    const sdir = root();
    // messageIndexEnable=false: with an index, recovery also starts where the index needs records
    // again (its unflushed file is rebuilt after a crash), which hides the checkpoint rule under test
    const fast = {
      brokerRole: 'SLAVE' as const,
      messageIndexEnable: false,
      haMasterAddress: `127.0.0.1:${ha.master!.port}`,
      flushIntervalCommitLog: 20,
      flushCommitLogThoroughInterval: 1,
      flushIntervalConsumeQueue: 20,
      flushConsumeQueueThoroughInterval: 1,
    };
    const slave = await openStore(smallConfig(sdir, fast));
    await slave.startHA({ listenPort: 0 });
    const max = m.getMaxPhyOffset();
    await waitUntil(() => slave.getMaxPhyOffset() === max, 5000, () => 'replicated');
    const onDisk = (): [number, number] => {
      const b = fs.readFileSync(path.join(sdir, 'checkpoint'));
      return [Number(b.readBigInt64BE(0)), Number(b.readBigInt64BE(8))];
    };
    await waitUntil(() => onDisk()[0] === T3 && onDisk()[1] === T3, 5000, () => `checkpoint on disk ${onDisk()}`);
    assert.equal(slave.checkpoint.physicMsgTimestamp, T3);
    slave.closeAbruptly(); // kill: the abort file stays

    const again = await open(sdir, { brokerRole: 'SLAVE', messageIndexEnable: false });
    const rep = again.recoveryReport;
    assert.equal(rep.mode, 'abnormal');
    assert.equal(rep.startOffset, 4096);
    assert.match(rep.startFile ?? '', /00000000000000004096$/);
    assert.equal(rep.stoppedAt, max);
    assert.equal(again.getMaxPhyOffset(), max);
    assert.equal(again.getMaxOffsetInQueue('T', 0), 5);
  });

  it('B35 a diverged slave truncates to the master offset (zeroed on disk) and clamps committed offsets; G then reads 6-9', async () => {
    const common = { mappedFileSizeCommitLog: 4096, mappedFileSizeConsumeQueue: 200, maxHashSlotNum: 1000, maxIndexNum: 4000 };
    const msg = (i: number, body = `b${i}`) => makeMessage({ topic: 'T', queueId: 0, body, properties: { WAIT: 'false' } });
    const mdir = root();
    const sdir = root();
    // history: the slave holds 10 messages of T/q0 (and G committed 10), the master only the first 6
    let pre = await openStore(smallConfig(sdir, common));
    for (let i = 0; i < 10; i++) await pre.putMessage(msg(i));
    await pre.shutdown();
    pre = await openStore(smallConfig(mdir, common));
    for (let i = 0; i < 6; i++) await pre.putMessage(msg(i));
    const masterMax = pre.getMaxPhyOffset();
    await pre.shutdown();
    fs.mkdirSync(path.join(sdir, 'config'), { recursive: true });
    fs.writeFileSync(path.join(sdir, 'config', 'consumerOffset.json'), JSON.stringify({ offsetTable: { 'T@G': { '0': 10 } } }));

    const haPort = await freePort();
    const brokerConf = (dir: string, extra: Record<string, string>): Record<string, string> => ({
      storePathRootDir: dir,
      listenPort: '0',
      namesrvAddr: '',
      ...Object.fromEntries(Object.entries(common).map(([k, v]) => [k, String(v)])),
      ...extra,
    });
    const master = await BrokerController.create({ brokerConfig: brokerConf(mdir, { brokerRole: 'ASYNC_MASTER', haListenPort: String(haPort) }), logger: silentLogger });
    cleanups.push(() => master.shutdown());
    await master.start();
    const slave = await BrokerController.create({
      brokerConfig: brokerConf(sdir, { brokerRole: 'SLAVE', brokerId: '1', haMasterAddress: `127.0.0.1:${haPort}` }),
      logger: silentLogger,
    });
    cleanups.push(() => slave.shutdown());
    const sstore = slave.ctx.store as DefaultMessageStore;
    const slaveMaxBefore = sstore.getMaxPhyOffset();
    assert.equal(sstore.getMaxOffsetInQueue('T', 0), 10);
    assert.equal(slave.ctx.consumerOffsetManager.queryOffset('G', 'T', 0), 10);
    await slave.start();

    await waitUntil(() => (slave.replication?.stats().truncations.length ?? 0) === 1, 10_000, () => 'truncation');
    const tr = slave.replication!.stats().truncations[0]!;
    assert.deepEqual([tr.fromOffset, tr.toOffset], [slaveMaxBefore, masterMax]);
    assert.equal(sstore.getMaxPhyOffset(), masterMax);
    assert.equal(sstore.getMaxOffsetInQueue('T', 0), 6);
    await waitUntil(() => slave.ctx.consumerOffsetManager.queryOffset('G', 'T', 0) === 6, 5000, () => 'offset clamped');
    assert.ok(readCommitLog(sdir, masterMax, slaveMaxBefore).equals(Buffer.alloc(slaveMaxBefore - masterMax)), 'truncated bytes are zero on disk');
    await slave.ctx.consumerOffsetManager.whenPersisted();
    const persisted = JSON.parse(fs.readFileSync(path.join(sdir, 'config', 'consumerOffset.json'), 'utf8'));
    assert.equal(persisted.offsetTable['T@G']['0'], 6);

    for (let i = 0; i < 4; i++) assert.equal((await master.ctx.putMessage(msg(i, `new${i}`))).status, 'PUT_OK');
    const mstore = master.ctx.store as DefaultMessageStore;
    await waitUntil(() => sstore.getMaxPhyOffset() === mstore.getMaxPhyOffset() && sstore.getMaxOffsetInQueue('T', 0) === 10, 10_000, () => 'new messages replicated');
    const committed = slave.ctx.consumerOffsetManager.queryOffset('G', 'T', 0);
    const got = await sstore.getMessage('G', 'T', 0, committed, 32);
    assert.equal(got.status, 'FOUND');
    assert.deepEqual(got.messageQueueOffsets, [6, 7, 8, 9]);
    assert.deepEqual(got.messages.map((b) => decodeRecord(b, 0).body.toString()), ['new0', 'new1', 'new2', 'new3']);
  });
});
