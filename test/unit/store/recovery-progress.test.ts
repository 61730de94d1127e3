import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RecoveryProgressReporter, type RecoveryProgress } from '../../../src/store/recovery/recovery-progress.js';
import { CaptureLogger } from '../../support/capture-logger.js';

describe('RecoveryProgressReporter', () => {
  it('reports bytes scanned of bytes to scan, a rate and an ETA, logs a line and yields once per report', async () => {
    const seen: RecoveryProgress[] = [];
    const logger = new CaptureLogger();
    const r = new RecoveryProgressReporter('CommitLog abnormal recovery scan', 100 * 1048576, logger, (p) => seen.push(p), 0);
    let yields = 0;
    for (let i = 1; i <= 4096 * 3; i++) {
      const pause = r.tick(i * 1024);
      if (pause) {
        yields++;
        await pause;
      }
    }
    assert.equal(yields, 3);
    assert.equal(seen.length, 3);
    assert.equal(seen[2]!.scannedBytes, 4096 * 3 * 1024);
    assert.equal(seen[2]!.totalBytes, 100 * 1048576);
    assert.ok(seen[2]!.bytesPerSecond > 0);
    assert.ok(seen[2]!.etaMs! > 0);
    assert.match(logger.lines.map((l) => l.text).join('\n'), /CommitLog abnormal recovery scan: 12\.0 of 100\.0 MiB \(12\.0 %\), [\d.]+ MiB\/s, ETA \d+ s/);
  });

  it('a scan shorter than the interval never reports nor yields', () => {
    const r = new RecoveryProgressReporter('scan', 1000, new CaptureLogger(), () => assert.fail('no report expected'), 60_000);
    for (let i = 0; i < 10_000; i++) assert.equal(r.tick(i), null);
  });
});
