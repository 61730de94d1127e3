import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ManualClock } from '../../../src/common/time/clock.js';
import { checkRecord, decodeRecord, readPhysicalOffset, readQueueOffset } from '../../../src/common/message/record-codec.js';
import { MessageSysFlag } from '../../../src/common/message/sysflag.js';
import { offsetToFileName } from '../../../src/store/mapped-file/file-names.js';
import { parseDelayLevels } from '../../../src/store/store-config.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

/** Body length giving a record of `recordSize` bytes for topic "T" without properties (overhead 92). */
const bodyFor = (recordSize: number): Buffer => Buffer.alloc(recordSize - 92, 0x61);

test('blank record + roll: a 1000-byte record that does not fit goes to file 2 at 4096 behind an 8-byte filler', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    const offsets: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await store.putMessage(makeMessage({ body: bodyFor(1000) }));
      assert.equal(r.status, 'PUT_OK');
      assert.equal(r.appendResult!.wroteBytes, 1000);
      assert.equal(r.appendResult!.queueOffset, i);
      offsets.push(r.appendResult!.wroteOffset);
    }
    assert.deepEqual(offsets, [0, 1000, 2000, 3000, 4096]);
    assert.equal(store.getMaxPhyOffset(), 5096);
    await store.shutdown();
    const f0 = fs.readFileSync(path.join(root, 'commitlog', offsetToFileName(0)));
    assert.equal(f0.length, 4096);
    assert.deepEqual([...f0.subarray(4000, 4008)], [0x00, 0x00, 0x00, 0x60, 0xcb, 0xd4, 0x31, 0x94], 'int 96 + BLANK_MAGIC_CODE');
    assert.ok(f0.subarray(4008).every((b) => b === 0), 'rest of the gap untouched (zeros)');
    const f1 = fs.readFileSync(path.join(root, 'commitlog', offsetToFileName(4096)));
    assert.equal(readPhysicalOffset(f1, 0), 4096, 'PHYSICALOFFSET re-patched to the new file');
    assert.equal(readQueueOffset(f1, 0), 4, 'queue offset unchanged by the roll');
  } finally {
    removeDir(root);
  }
});

test('blank record + roll: a record leaving exactly 8 bytes fits; the next one rolls behind an 8-byte filler', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    const offsets: number[] = [];
    for (let i = 0; i < 5; i++) offsets.push((await store.putMessage(makeMessage({ body: bodyFor(1022) }))).appendResult!.wroteOffset);
    assert.deepEqual(offsets, [0, 1022, 2044, 3066, 4096]);
    await store.shutdown();
    const f0 = fs.readFileSync(path.join(root, 'commitlog', offsetToFileName(0)));
    assert.deepEqual([...f0.subarray(4088, 4096)], [0, 0, 0, 8, 0xcb, 0xd4, 0x31, 0x94]);
  } finally {
    removeDir(root);
  }
});

test('put validation happens before any write: topic, body limit, record limit, properties limit', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root, { maxMessageSize: 1024, mappedFileSizeCommitLog: 1 << 20 }));
    const bad = await store.putMessage(makeMessage({ topic: 'has space' }));
    assert.equal(bad.status, 'MESSAGE_ILLEGAL');
    assert.match(bad.remark!, /characters other than/);
    const long = await store.putMessage(makeMessage({ topic: 'a'.repeat(128) }));
    assert.equal(long.status, 'MESSAGE_ILLEGAL');
    assert.match(long.remark!, /too long/);
    const big = await store.putMessage(makeMessage({ body: Buffer.alloc(1025) }));
    assert.equal(big.status, 'MESSAGE_ILLEGAL');
    assert.equal(big.remark, 'message body size 1025 exceeds maxMessageSize 1024');
    const props = await store.putMessage(makeMessage({ properties: { X: 'v'.repeat(32767) } }));
    assert.equal(props.status, 'PROPERTIES_SIZE_EXCEEDED');
    assert.equal(store.getMaxPhyOffset(), 0, 'nothing written');
    const ok = await store.putMessage(makeMessage({ body: Buffer.alloc(1024) }));
    assert.equal(ok.status, 'PUT_OK');
    assert.equal(ok.appendResult!.queueOffset, 0, 'rejected puts consumed no queue offset');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B23 body of 4 MiB - 10 B is accepted, 4 MiB + 1 B is rejected with MESSAGE_ILLEGAL', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root, { mappedFileSizeCommitLog: 16 * 1024 * 1024 }));
    const ok = await store.putMessage(makeMessage({ body: Buffer.alloc(4 * 1024 * 1024 - 10, 1) }));
    assert.equal(ok.status, 'PUT_OK');
    // a retry copy with extra properties still passes: the limit is on the body
    const retry = await store.putMessage(
      makeMessage({ topic: '%RETRY%g', body: Buffer.alloc(4 * 1024 * 1024 - 10, 1), properties: { RETRY_TOPIC: 'T', ORIGIN_MESSAGE_ID: 'X'.repeat(32), RECONSUME_TIME: '1' } }),
    );
    assert.equal(retry.status, 'PUT_OK');
    const bad = await store.putMessage(makeMessage({ body: Buffer.alloc(4 * 1024 * 1024 + 1) }));
    assert.equal(bad.status, 'MESSAGE_ILLEGAL');
    assert.equal(bad.remark, 'message body size 4194305 exceeds maxMessageSize 4194304');
    const g = await store.getMessage('g', '%RETRY%g', 0, 0, 1);
    assert.equal(g.status, 'FOUND');
    assert.equal(decodeRecord(g.messages[0]!).body.length, 4 * 1024 * 1024 - 10);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('transaction types: PREPARED/ROLLBACK get queue offset 0 and no ConsumeQueue entry; COMMIT does', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    await store.putMessage(makeMessage());
    const prepared = await store.putMessage(makeMessage({ sysFlag: MessageSysFlag.TRANSACTION_PREPARED_TYPE }));
    const rollback = await store.putMessage(makeMessage({ sysFlag: MessageSysFlag.TRANSACTION_ROLLBACK_TYPE }));
    const commit = await store.putMessage(makeMessage({ sysFlag: MessageSysFlag.TRANSACTION_COMMIT_TYPE }));
    assert.equal(prepared.appendResult!.queueOffset, 0);
    assert.equal(rollback.appendResult!.queueOffset, 0);
    assert.equal(commit.appendResult!.queueOffset, 1);
    assert.equal(store.getMaxOffsetInQueue('T', 0), 2);
    assert.equal(store.getCommitLogOffsetInQueue('T', 0, 1), commit.appendResult!.wroteOffset);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('store timestamps are monotonic in file order even when the clock goes back', async () => {
  const root = tempDir();
  try {
    const clock = new ManualClock(5000);
    const store = await openStore(smallConfig(root), { clock });
    const a = await store.putMessage(makeMessage());
    clock.set(4000);
    const b = await store.putMessage(makeMessage());
    clock.set(6000);
    const c = await store.putMessage(makeMessage());
    assert.deepEqual([a, b, c].map((r) => r.appendResult!.storeTimestamp), [5000, 5000, 6000]);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('the dispatch request built at append equals checkRecord on the stored bytes (incl. schedule-topic tags code)', async () => {
  const root = tempDir();
  try {
    const clock = new ManualClock(1_000_000);
    const seen: unknown[] = [];
    const store = await openStore(smallConfig(root, { mappedFileSizeCommitLog: 1 << 20 }), {
      clock,
      dispatchers: [{ name: 'spy', dispatch: (r) => seen.push(r) }],
    });
    const msgs = [
      makeMessage({ tags: 'TagA', keys: 'k1 k2', properties: { UNIQ_KEY: 'U1' } }),
      makeMessage({ topic: 'SCHEDULE_TOPIC_XXXX', queueId: 2, tags: 'x', properties: { DELAY: '3' } }),
      makeMessage({ topic: 'SCHEDULE_TOPIC_XXXX', queueId: 17, properties: { DELAY: '99' } }),
    ];
    for (const m of msgs) {
      const r = await store.putMessage(m);
      const bytes = (await store.selectOneMessageByOffset(r.appendResult!.wroteOffset))!;
      const check = checkRecord(bytes, 0, bytes.length, { checkCrc: true, delayLevelTableMs: parseDelayLevels(store.config.messageDelayLevel) });
      assert.equal(check.kind, 'valid');
      assert.deepEqual(seen.at(-1), (check as { dispatch: unknown }).dispatch);
    }
    assert.equal((seen[1] as { tagsCode: number }).tagsCode, 1_000_000 + 10_000, 'level 3 = 10 s');
    assert.equal((seen[2] as { tagsCode: number }).tagsCode, 1_000_000 + 7_200_000, 'level clamped to 18 = 2 h');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('selectOneMessageByOffset / lookMessageByOffset return null outside the data and on a filler', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    for (let i = 0; i < 5; i++) await store.putMessage(makeMessage({ body: bodyFor(1000) }));
    assert.equal((await store.lookMessageByOffset(1000))!.commitLogOffset, 1000);
    assert.equal(await store.lookMessageByOffset(4000), null, 'blank filler');
    assert.equal(await store.lookMessageByOffset(5096), null, 'at max');
    assert.equal(await store.lookMessageByOffset(-1), null);
    assert.equal((await store.selectOneMessageByOffset(4096))!.length, 1000);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});
