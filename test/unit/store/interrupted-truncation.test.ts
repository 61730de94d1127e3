/**
 * Found by the store simulation (test/sim; seeds 28, 44, 49 of a 100-seed run): recovery cuts a
 * segment with `truncateTo`, which zeroes the tail by shrinking the file and extending it again.
 * A crash between those two ftruncates left a short segment — and, because the cut file was
 * shrunk before the later files were deleted, possibly in the middle — and every later start
 * failed with SegmentLoadError ("has length 15036 but the configured segment size is 65536").
 * Now later files are deleted first, truncateTo keeps a `<segment>.truncating` marker while the
 * file may be short, and load() completes a marked truncation by extending the file with zeros.
 * A short segment without a marker is still refused (a changed size setting; mapped-file.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { offsetToFileName } from '../../../src/store/mapped-file/file-names.js';
import { MappedFileQueue } from '../../../src/store/mapped-file/mapped-file-queue.js';
import { removeDir, tempDir } from '../../support/store-fixtures.js';

/** The power fails at the `failAt`-th ftruncate (1-based): it throws and nothing after it runs. */
class FtruncateCrash extends NodeFileSystem {
  calls = 0;
  constructor(private readonly failAt: number) {
    super();
  }
  override ftruncate(fd: number, len: number): void {
    if (++this.calls === this.failAt) throw Object.assign(new Error('power lost'), { code: 'EIO' });
    super.ftruncate(fd, len);
  }
}

test('a crash inside truncateDirtyFiles between shrink and re-extension: later files already gone, the marked short file is completed at load', () => {
  const dir = tempDir();
  try {
    const q = new MappedFileQueue({ dir, fileSize: 1024, fs: new NodeFileSystem() });
    for (const data of [Buffer.alloc(1024, 1), Buffer.alloc(1024, 2), Buffer.alloc(100, 3)]) q.getLastMappedFileOrCreate(q.getMaxOffset()).append(data);
    q.shutdown();
    assert.deepEqual(fs.readdirSync(dir).sort(), [offsetToFileName(0), offsetToFileName(1024), offsetToFileName(2048)]);

    const crashing = new FtruncateCrash(2); // the first ftruncate shrinks file 1, the second (re-extend) never happens
    const q2 = new MappedFileQueue({ dir, fileSize: 1024, fs: crashing });
    q2.load();
    assert.throws(() => q2.truncateDirtyFiles(1024 + 300), /power lost/);
    assert.equal(fs.existsSync(path.join(dir, offsetToFileName(2048))), false, 'the later file was deleted before the cut');
    assert.equal(fs.statSync(path.join(dir, offsetToFileName(1024))).size, 300, 'the crash left the cut file short');
    assert.ok(fs.existsSync(path.join(dir, `${offsetToFileName(1024)}.truncating`)), 'with its truncation marker');
    q2.shutdown();

    const q3 = new MappedFileQueue({ dir, fileSize: 1024, fs: new NodeFileSystem() });
    q3.load(); // threw SegmentLoadError before
    assert.equal(q3.getFiles().length, 2);
    const cut = fs.readFileSync(path.join(dir, offsetToFileName(1024)));
    assert.equal(cut.length, 1024, 'extended back to the segment size');
    assert.ok(cut.subarray(0, 300).every((b) => b === 2), 'kept bytes intact');
    assert.ok(cut.subarray(300).every((b) => b === 0), 'the cut tail reads as zeros');
    assert.equal(fs.existsSync(path.join(dir, `${offsetToFileName(1024)}.truncating`)), false, 'marker removed');
    q3.shutdown();
  } finally {
    removeDir(dir);
  }
});

test('a completed truncation leaves no marker and the segment at full size', () => {
  const dir = tempDir();
  try {
    const q = new MappedFileQueue({ dir, fileSize: 1024, fs: new NodeFileSystem() });
    q.getLastMappedFileOrCreate(0).append(Buffer.alloc(800, 7));
    q.truncateDirtyFiles(100);
    q.shutdown();
    assert.deepEqual(fs.readdirSync(dir), [offsetToFileName(0)]);
    const data = fs.readFileSync(path.join(dir, offsetToFileName(0)));
    assert.equal(data.length, 1024);
    assert.ok(data.subarray(0, 100).every((b) => b === 7) && data.subarray(100).every((b) => b === 0));
  } finally {
    removeDir(dir);
  }
});
