import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

const ALL = [0, Number.MAX_SAFE_INTEGER] as const;

test('B14 a key repeated in KEYS and the UNIQ_KEY each find the message exactly once, also after an abnormal restart', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    const r = await store.putMessage(makeMessage({ topic: 'T', keys: 'order-1 order-1', properties: { UNIQ_KEY: 'u1' } }));
    assert.equal(r.status, 'PUT_OK');
    for (const key of ['order-1', 'u1']) {
      const q = await store.queryMessage('T', key, 32, ...ALL);
      assert.equal(q.messages.length, 1, key);
      assert.equal(decodeRecord(q.messages[0]!).commitLogOffset, r.appendResult!.wroteOffset);
    }
    store.closeAbruptly();
    const again = await openStore(smallConfig(root));
    assert.equal(again.recoveryReport.mode, 'abnormal');
    for (const key of ['order-1', 'u1']) assert.equal((await again.queryMessage('T', key, 32, ...ALL)).messages.length, 1, `${key} after restart`);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('keys whose hashes collide ("Aa"/"BB" → 2112) and other topics are filtered out by the actual record', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    await store.putMessage(makeMessage({ topic: 'T', keys: 'BB', body: 'bb' }));
    await store.putMessage(makeMessage({ topic: 'T', keys: 'Aa', body: 'aa' }));
    await store.putMessage(makeMessage({ topic: 'U', keys: 'Aa', body: 'other topic' }));
    const q = await store.queryMessage('T', 'Aa', 32, ...ALL);
    assert.deepEqual(q.messages.map((m) => decodeRecord(m).body.toString()), ['aa']);
    assert.deepEqual((await store.queryMessage('U', 'Aa', 32, ...ALL)).messages.map((m) => decodeRecord(m).body.toString()), ['other topic']);
    assert.equal((await store.queryMessage('T', 'missing', 32, ...ALL)).messages.length, 0);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('results are ascending by physical offset and never exceed maxNum (capped at maxMsgsNumBatch)', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root, { maxMsgsNumBatch: 5 }));
    const offsets: number[] = [];
    for (let i = 0; i < 12; i++) offsets.push((await store.putMessage(makeMessage({ keys: 'same' }))).appendResult!.wroteOffset);
    const three = await store.queryMessage('T', 'same', 3, ...ALL);
    assert.equal(three.messages.length, 3);
    const got = three.messages.map((m) => decodeRecord(m).commitLogOffset);
    assert.deepEqual(got, [...got].sort((a, b) => a - b));
    assert.equal((await store.queryMessage('T', 'same', 100, ...ALL)).messages.length, 5);
    assert.equal(three.indexLastUpdatePhyOffset, offsets[11]);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('index files roll over and keep answering; a clean restart keeps them', async () => {
  const root = tempDir();
  try {
    const cfg = smallConfig(root, { maxHashSlotNum: 8, maxIndexNum: 6 });
    const store = await openStore(cfg);
    const offsets: number[] = [];
    for (let i = 0; i < 20; i++) offsets.push((await store.putMessage(makeMessage({ keys: `k${i}` }))).appendResult!.wroteOffset);
    await store.shutdown();
    const again = await openStore(cfg);
    for (let i = 0; i < 20; i++) {
      const q = await again.queryMessage('T', `k${i}`, 32, ...ALL);
      assert.deepEqual(q.messages.map((m) => decodeRecord(m).commitLogOffset), [offsets[i]], `k${i}`);
    }
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});
