/**
 * Found by the store simulation (test/sim; 16 of 200 seeds, e.g. seed 10: "queryMessage(T0, K3)
 * misses surviving messages 144" after a restart): IndexFile.commit marked the changed slot-table
 * pages clean BEFORE writing them. When that pwrite failed (EIO, ENOSPC), the retry wrote the
 * entries and the header but not the slots, so the file on disk lost the newest chain heads:
 * lookups by key after any restart (clean or crash) missed those messages, although the
 * in-memory table answered right until then.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { IndexFile } from '../../../src/store/index/index-file.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';
import { removeDir, tempDir } from '../../support/store-fixtures.js';

test('a failed slot-table write is retried by the next commit: the file on disk finds every key', () => {
  const dir = tempDir('tsmq-index-fault-');
  const fs = new FaultyFileSystem();
  try {
    const path = join(dir, 'idx');
    const f = IndexFile.create(fs, path, 16, 64);
    f.putKey('a', 100, 1_700_000_000_000);
    f.commit();
    f.putKey('b', 200, 1_700_000_001_000);
    let pwrites = 0;
    fs.pathFault = (op) => (op === 'pwrite' && ++pwrites === 2 ? 'EIO' : null); // entries written, then the slot page fails
    assert.throws(() => f.commit(), /injected EIO/);
    fs.pathFault = null;
    f.commit(); // the retry
    const inMemory: number[] = [];
    f.selectPhyOffsets(inMemory, 'b', 10, 0, Number.MAX_SAFE_INTEGER);
    assert.deepEqual(inMemory, [200]);
    f.close();

    const reopened = IndexFile.open(fs, path, 16, 64, false);
    assert.equal(reopened.header.indexCount, 3);
    for (const [key, phy] of [['a', 100], ['b', 200]] as const) {
      const out: number[] = [];
      reopened.selectPhyOffsets(out, key, 10, 0, Number.MAX_SAFE_INTEGER);
      assert.deepEqual(out, [phy], `key ${key} found in the file on disk`);
    }
    reopened.close();
  } finally {
    removeDir(dir);
  }
});
