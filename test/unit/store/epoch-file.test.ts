import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EPOCH_FILE_NAME, EpochFile, EpochFileError, findConsistentPoint } from '../../../src/store/ha/epoch-file.js';
import { encodeHello, encodeReport, ReportReader } from '../../../src/store/ha/ha-protocol.js';

function tmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-epoch-'));
}

describe('epoch file (epochFileCheckpoint)', () => {
  it('persists entries as epoch-startOffset lines and reloads them', async () => {
    const dir = tmp();
    const f = EpochFile.load(dir);
    assert.equal(f.lastEpoch(), 0);
    await f.append(7, 0);
    await f.append(12, 4096);
    assert.equal(fs.readFileSync(path.join(dir, EPOCH_FILE_NAME), 'utf8'), '7-0\n12-4096\n');
    const g = EpochFile.load(dir);
    assert.deepEqual(g.entries(), [{ epoch: 7, startOffset: 0 }, { epoch: 12, startOffset: 4096 }]);
    assert.equal(g.lastEpoch(), 12);
  });

  it('append drops later and empty entries and refuses a non-increasing epoch', async () => {
    const f = EpochFile.load(tmp());
    await f.replace([{ epoch: 3, startOffset: 0 }, { epoch: 5, startOffset: 100 }, { epoch: 9, startOffset: 300 }]);
    await f.append(11, 100); // a replica elected at 100: epochs 5 (empty there) and 9 are gone
    assert.deepEqual(f.entries(), [{ epoch: 3, startOffset: 0 }, { epoch: 11, startOffset: 100 }]);
    await assert.rejects(f.append(2, 500), EpochFileError);
  });

  it('a malformed file is an error naming the line, not an empty history', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, EPOCH_FILE_NAME), '3-0\nbogus\n');
    assert.throws(() => EpochFile.load(dir), /line 2/);
    fs.writeFileSync(path.join(dir, EPOCH_FILE_NAME), '5-100\n3-200\n');
    assert.throws(() => EpochFile.load(dir), /out of order/);
  });
});

describe('findConsistentPoint', () => {
  const INF = Number.MAX_SAFE_INTEGER;
  it('a slave that is a prefix of the master keeps everything', () => {
    assert.equal(findConsistentPoint([{ epoch: 4, startOffset: 0 }], 500, [{ epoch: 4, startOffset: 0 }, { epoch: 8, startOffset: 900 }], INF), 500);
  });
  it('an old master with unreplicated data in its epoch is cut where the new epoch starts', () => {
    // old master wrote epoch 4 up to 1200; the new master took over at 900 with epoch 8
    assert.equal(findConsistentPoint([{ epoch: 4, startOffset: 0 }], 1200, [{ epoch: 4, startOffset: 0 }, { epoch: 8, startOffset: 900 }], INF), 900);
  });
  it('an epoch the master never had is dropped back to the last shared epoch end', () => {
    // replica was briefly master in epoch 6 from 700 (never acked); master history: 4@0, 8@700
    const local = [{ epoch: 4, startOffset: 0 }, { epoch: 6, startOffset: 700 }];
    assert.equal(findConsistentPoint(local, 950, [{ epoch: 4, startOffset: 0 }, { epoch: 8, startOffset: 700 }], INF), 700);
  });
  it('same epoch number with another start offset is not shared', () => {
    assert.equal(findConsistentPoint([{ epoch: 4, startOffset: 100 }], 300, [{ epoch: 4, startOffset: 0 }], INF), 0);
  });
  it('data before the first epoch counts as epoch 0 on both sides; no history means keep up to the master', () => {
    assert.equal(findConsistentPoint([], 400, [{ epoch: 2, startOffset: 250 }], INF), 250);
    assert.equal(findConsistentPoint([], 0, [{ epoch: 2, startOffset: 0 }], INF), 0);
  });
});

describe('controller hello on the HA connection', () => {
  it('the report reader takes the replica id from a hello and never counts it as an offset', () => {
    const r = new ReportReader();
    assert.equal(r.push(Buffer.concat([encodeHello(3), encodeReport(4096)])), 4096);
    assert.equal(r.helloReplicaId, 3);
    const s = new ReportReader();
    const both = Buffer.concat([encodeHello(65534), encodeReport(8)]);
    assert.equal(s.push(both.subarray(0, 5)), null);
    assert.equal(s.push(both.subarray(5, 8)), null); // the hello alone
    assert.equal(s.helloReplicaId, 65534);
    assert.equal(s.push(both.subarray(8)), 8);
    assert.throws(() => encodeHello(70_000), RangeError);
  });
});
