/**
 * The 5.x maintenance admin requests mqadmin 5.3.3 sends (in-process broker, FakeMessageStore):
 * cold-data flow control group config (2001/2002, seen through 2003), CommitLog read-ahead mode
 * (2004), RESET_MASTER_FLUSH_OFFSET (908) on a master and a slave, POP_ROLLBACK (200056).
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BrokerHarness } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

const info = async (): Promise<Record<string, unknown>> => JSON.parse((await h.call(RequestCode.GET_COLD_DATA_FLOW_CTR_INFO, null)).body!.toString('utf8')) as Record<string, unknown>;

describe('cold-data flow control group config: 2001 update, 2002 remove, 2003 shows the table', () => {
  it('puts whole-number entries, skips the rest, removes by group name, answers SUCCESS each time', async () => {
    h = await BrokerHarness.create({ config: { cgColdReadThreshold: '4096' } });
    const up = await h.call(RequestCode.UPDATE_COLD_DATA_FLOW_CTR_CONFIG, null, Buffer.from('GID_A=1048576\nGID_B=-7\nGID_BAD=12x\n#GID_C=1\n'));
    assert.equal(up.code, ResponseCode.SUCCESS);
    assert.deepEqual(await info(), { globalAcc: 0, cgColdReadThreshold: 4096, configTable: { GID_A: 1048576, GID_B: -7 }, globalColdReadThreshold: 100 * 1024 * 1024, runtimeTable: {} });
    assert.equal((await h.call(RequestCode.UPDATE_COLD_DATA_FLOW_CTR_CONFIG, null, Buffer.from('GID_A=5\n'))).code, ResponseCode.SUCCESS);
    assert.equal((await h.call(RequestCode.UPDATE_COLD_DATA_FLOW_CTR_CONFIG, null, null)).code, ResponseCode.SUCCESS, 'no body: SUCCESS, nothing changes');
    assert.deepEqual((await info()).configTable, { GID_A: 5, GID_B: -7 });
    assert.equal((await h.call(RequestCode.REMOVE_COLD_DATA_FLOW_CTR_CONFIG, null, Buffer.from('GID_B'))).code, ResponseCode.SUCCESS);
    assert.equal((await h.call(RequestCode.REMOVE_COLD_DATA_FLOW_CTR_CONFIG, null, Buffer.from('GID_NEVER'))).code, ResponseCode.SUCCESS);
    assert.deepEqual((await info()).configTable, { GID_A: 5 });
  });
});

describe('2004 SET_COMMITLOG_READ_MODE', () => {
  it('0/1 set dataReadAheadEnable true/false with the success remark; other ints → 29; non-ints and no header → SYSTEM_ERROR', async () => {
    h = await BrokerHarness.create();
    const config = async (): Promise<string> => (await h.call(RequestCode.GET_BROKER_CONFIG, null)).body!.toString('utf8');
    const random = await h.call(RequestCode.SET_COMMITLOG_READ_MODE, { READ_AHEAD_MODE: '1' });
    assert.equal(random.code, ResponseCode.SUCCESS);
    assert.equal(random.remark, 'set commitlog readahead mode success, mode: 1');
    assert.match(await config(), /^dataReadAheadEnable=false$/m);
    const normal = await h.call(RequestCode.SET_COMMITLOG_READ_MODE, { READ_AHEAD_MODE: '0' });
    assert.equal(normal.remark, 'set commitlog readahead mode success, mode: 0');
    assert.match(await config(), /^dataReadAheadEnable=true$/m);
    const two = await h.call(RequestCode.SET_COMMITLOG_READ_MODE, { READ_AHEAD_MODE: '2' });
    assert.deepEqual([two.code, two.remark], [ResponseCode.INVALID_PARAMETER, 'set commitlog readahead mode param value error']);
    const word = await h.call(RequestCode.SET_COMMITLOG_READ_MODE, { READ_AHEAD_MODE: 'random' });
    assert.deepEqual([word.code, word.remark], [ResponseCode.SYSTEM_ERROR, 'set commitlog readahead mode failed']);
    const absent = await h.call(RequestCode.SET_COMMITLOG_READ_MODE, { other: 'x' });
    assert.deepEqual([absent.code, absent.remark], [ResponseCode.SYSTEM_ERROR, 'set commitlog readahead mode failed']);
    const none = await h.call(RequestCode.SET_COMMITLOG_READ_MODE, null);
    assert.deepEqual([none.code, none.remark], [ResponseCode.SYSTEM_ERROR, 'set commitlog readahead mode param error']);
    assert.match(await config(), /^dataReadAheadEnable=true$/m, 'refused requests change nothing');
  });

  it('dataReadAheadEnable is a regular store key: shown as true (Apache default) before any 2004, updateBrokerConfig sets and persists it, 2004 still flips it', async () => {
    h = await BrokerHarness.create();
    const config = async (): Promise<string> => (await h.call(RequestCode.GET_BROKER_CONFIG, null)).body!.toString('utf8');
    assert.match(await config(), /^dataReadAheadEnable=true$/m, 'shown from the start, like Apache MessageStoreConfig');
    const up = await h.call(RequestCode.UPDATE_BROKER_CONFIG, null, Buffer.from('dataReadAheadEnable=false\n'));
    assert.equal(up.code, ResponseCode.SUCCESS);
    assert.match(await config(), /^dataReadAheadEnable=false$/m);
    assert.match(fs.readFileSync(path.join(h.ctx.config.storePathRootDir, 'config', 'broker.properties'), 'utf8'), /^dataReadAheadEnable=false$/m, 'persisted with the rest');
    assert.equal((await h.call(RequestCode.SET_COMMITLOG_READ_MODE, { READ_AHEAD_MODE: '0' })).code, ResponseCode.SUCCESS);
    assert.match(await config(), /^dataReadAheadEnable=true$/m, '2004 works through the same key');
    const bad = await h.call(RequestCode.UPDATE_BROKER_CONFIG, null, Buffer.from('dataReadAheadEnable=maybe\n'));
    assert.notEqual(bad.code, ResponseCode.SUCCESS, 'a non-boolean is refused like any boolean key');
    assert.match(await config(), /^dataReadAheadEnable=true$/m, 'and changes nothing');
  });
});

describe('908 RESET_MASTER_FLUSH_OFFSET', () => {
  it('a master answers SUCCESS and leaves the checkpoint alone', async () => {
    h = await BrokerHarness.create();
    const checkpoint = { masterFlushedOffset: 0 };
    Object.assign(h.store, { checkpoint });
    assert.equal((await h.call(RequestCode.RESET_MASTER_FLUSH_OFFSET, { masterFlushOffset: '4096' })).code, ResponseCode.SUCCESS);
    assert.equal(checkpoint.masterFlushedOffset, 0);
  });

  it('a slave records the offset in the checkpoint; a malformed offset is a header error and changes nothing', async () => {
    h = await BrokerHarness.create({ config: { brokerId: '1' } });
    const checkpoint = { masterFlushedOffset: 0 };
    Object.assign(h.store, { checkpoint });
    assert.equal((await h.call(RequestCode.RESET_MASTER_FLUSH_OFFSET, { masterFlushOffset: '123456' })).code, ResponseCode.SUCCESS);
    assert.equal(checkpoint.masterFlushedOffset, 123456);
    assert.equal((await h.call(RequestCode.RESET_MASTER_FLUSH_OFFSET, null)).code, ResponseCode.SUCCESS, 'no offset: no change');
    assert.equal(checkpoint.masterFlushedOffset, 123456);
    // a HeaderError: the transport answers it as SYSTEM_ERROR with this remark
    await assert.rejects(h.call(RequestCode.RESET_MASTER_FLUSH_OFFSET, { masterFlushOffset: 'abc' }), /the custom field <masterFlushOffset> is not a number: abc/);
    assert.equal(checkpoint.masterFlushedOffset, 123456);
  });
});

describe('200056 POP_ROLLBACK', () => {
  it('SUCCESS without a remark (no RocksDB pop store to move from, as Apache with popConsumerKVServiceInit=false)', async () => {
    h = await BrokerHarness.create();
    const r = await h.call(RequestCode.POP_ROLLBACK, null);
    assert.equal(r.code, ResponseCode.SUCCESS);
    assert.ok(!r.remark);
  });
});
