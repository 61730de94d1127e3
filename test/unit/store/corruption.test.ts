/**
 * Byte-level corruption at the CommitLog tail and in the index, each recovered to exact offsets
 * (issue 3 item 6; complements B08, B10, B12 in recovery.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

const CL0 = (root: string): string => path.join(root, 'commitlog', '00000000000000000000');

function patch(file: string, pos: number, bytes: Buffer): void {
  const fd = fs.openSync(file, 'r+');
  fs.writeSync(fd, bytes, 0, bytes.length, pos);
  fs.closeSync(fd);
}

async function writeN(root: string, n: number): Promise<Array<{ offset: number; size: number }>> {
  const store = await openStore(smallConfig(root));
  const out: Array<{ offset: number; size: number }> = [];
  for (let i = 0; i < n; i++) {
    const r = await store.putMessage(makeMessage({ keys: `k${i}`, tags: 'TagA', body: Buffer.alloc(200, 97 + i) }));
    out.push({ offset: r.appendResult!.wroteOffset, size: r.appendResult!.wroteBytes });
  }
  store.closeAbruptly();
  return out;
}

// Where the fifth record is cut, as a function of its size: inside TOTALSIZE, inside the fixed
// header, inside the body, inside the properties (3 bytes before its end).
const SHAPES: Array<[string, (size: number) => number]> = [
  ['inside the size field', () => 2],
  ['inside the header', () => 40],
  ['inside the body', () => 91 + 100],
  ['inside the properties', (size) => size - 3],
];

for (const [shape, cutAt] of SHAPES) {
  test(`torn tail ${shape}: recovery ends the log at the last whole record (CL max = end of msg 4, CQ max = 4)`, async () => {
    const root = tempDir();
    try {
      const recs = await writeN(root, 5);
      const fifth = recs[4]!;
      const cut = cutAt(fifth.size);
      patch(CL0(root), fifth.offset + cut, Buffer.alloc(fifth.size - cut)); // bytes after the cut never reached the file
      const again = await openStore(smallConfig(root));
      assert.equal(again.recoveryReport.mode, 'abnormal');
      assert.equal(again.getMaxPhyOffset(), fifth.offset);
      assert.equal(again.getMaxOffsetInQueue('T', 0), 4);
      const next = await again.putMessage(makeMessage({ body: 'next' }));
      assert.equal(next.appendResult!.wroteOffset, fifth.offset);
      assert.equal(next.appendResult!.queueOffset, 4);
      await again.shutdown();
    } finally {
      removeDir(root);
    }
  });
}

test('a record copied from another offset (valid CRC, wrong PHYSICALOFFSET) ends the log where it sits', async () => {
  const root = tempDir();
  try {
    const recs = await writeN(root, 6);
    assert.equal(recs[1]!.size, recs[4]!.size);
    const file = fs.readFileSync(CL0(root));
    patch(CL0(root), recs[4]!.offset, file.subarray(recs[1]!.offset, recs[1]!.offset + recs[1]!.size));
    const again = await openStore(smallConfig(root));
    assert.equal(again.getMaxPhyOffset(), recs[4]!.offset, 'stale copy of msg 1 is not accepted as msg 4');
    assert.equal(again.getMaxOffsetInQueue('T', 0), 4);
    assert.match(again.recoveryReport.stopReason, /offset/i);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('an index file cut short is dropped and rebuilt from the CommitLog; every key is found again', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    const offsets: number[] = [];
    for (let i = 0; i < 8; i++) offsets.push((await store.putMessage(makeMessage({ keys: `key-${i}` }))).appendResult!.wroteOffset);
    await store.shutdown();
    const indexDir = path.join(root, 'index');
    const [name] = fs.readdirSync(indexDir);
    fs.truncateSync(path.join(indexDir, name!), 1000);
    const again = await openStore(smallConfig(root));
    for (let i = 0; i < 8; i++) {
      const q = await again.queryMessage('T', `key-${i}`, 32, 0, Number.MAX_SAFE_INTEGER);
      assert.equal(q.messages.length, 1, `key-${i}`);
    }
    assert.equal(again.getMaxOffsetInQueue('T', 0), 8);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});
