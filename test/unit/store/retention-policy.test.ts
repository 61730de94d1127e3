/**
 * Retention decisions and configuration (spec §6, Appendix A): defaults, clamping, deleteWhen,
 * the disk-space thresholds with their hysteresis, the usage probe, running flags.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as os from 'node:os';
import { ConfigError } from '../../../src/common/config/config-spec.js';
import { resolveStoreConfig } from '../../../src/store/store-config.js';
import { StatfsDiskUsageProbe, usedRatioOf } from '../../../src/store/retention/disk-usage-probe.js';
import { evaluateDiskSpace, isTimeToDelete, retentionRatios } from '../../../src/store/retention/retention-policy.js';
import { RunningFlags, describeWriteError } from '../../../src/store/retention/running-flags.js';
import { localTime } from './retention-support.js';

test('retention config keys: RocketMQ names and defaults', () => {
  const c = resolveStoreConfig({ storePathRootDir: '/x' });
  assert.deepEqual(
    [
      c.fileReservedTime,
      c.deleteWhen,
      c.diskMaxUsedSpaceRatio,
      c.diskSpaceWarningLevelRatio,
      c.diskSpaceCleanForciblyRatio,
      c.deleteCommitLogFilesInterval,
      c.deleteConsumeQueueFilesInterval,
      c.deleteFileBatchMax,
      c.cleanResourceInterval,
      c.redeleteHangedFileInterval,
      c.destroyMapedFileIntervalForcibly,
      c.cleanFileForciblyEnable,
    ],
    [72, '04', 75, 90, 85, 100, 100, 10, 10_000, 120_000, 120_000, true],
  );
  const custom = resolveStoreConfig({ storePathRootDir: '/x', fileReservedTime: '48', deleteWhen: '01;13', cleanFileForciblyEnable: 'false' });
  assert.deepEqual([custom.fileReservedTime, custom.deleteWhen, custom.cleanFileForciblyEnable], [48, '01;13', false]);
  assert.throws(() => resolveStoreConfig({ deleteWhen: '25' }), ConfigError);
  assert.throws(() => resolveStoreConfig({ deleteWhen: 'four' }), ConfigError);
  // Any integer is accepted and clamped where used, as RocketMQ's MessageStoreConfig getters do.
  const high = resolveStoreConfig({ storePathRootDir: '/x', diskMaxUsedSpaceRatio: '150', diskSpaceWarningLevelRatio: '-5', diskSpaceCleanForciblyRatio: '100' });
  assert.deepEqual([high.diskMaxUsedSpaceRatio, high.diskSpaceWarningLevelRatio, high.diskSpaceCleanForciblyRatio], [150, -5, 100]);
  assert.deepEqual(retentionRatios(high), { maxUsed: 0.95, warning: 0.35, forcibly: 0.85 });
  assert.throws(() => resolveStoreConfig({ diskMaxUsedSpaceRatio: '75.5' }), /invalid config diskMaxUsedSpaceRatio=75.5: must be an integer percentage/);
  assert.throws(() => resolveStoreConfig({ diskMaxUsedSpaceRatio: 'high' }), /invalid config diskMaxUsedSpaceRatio=high: not a number/);
  assert.throws(() => resolveStoreConfig({ fileReservedTime: '0' }), ConfigError);
});

test('ratios are clamped like RocketMQ: maxUsed 10..95, warning 35..90, forcibly 30..85', () => {
  assert.deepEqual(retentionRatios({ diskMaxUsedSpaceRatio: 75, diskSpaceWarningLevelRatio: 90, diskSpaceCleanForciblyRatio: 85 }), { maxUsed: 0.75, warning: 0.9, forcibly: 0.85 });
  assert.deepEqual(retentionRatios({ diskMaxUsedSpaceRatio: 99, diskSpaceWarningLevelRatio: 99, diskSpaceCleanForciblyRatio: 99 }), { maxUsed: 0.95, warning: 0.9, forcibly: 0.85 });
  assert.deepEqual(retentionRatios({ diskMaxUsedSpaceRatio: 1, diskSpaceWarningLevelRatio: 1, diskSpaceCleanForciblyRatio: 1 }), { maxUsed: 0.1, warning: 0.35, forcibly: 0.3 });
});

test('deleteWhen matches the local hour (the whole hour), several hours separated by ";"', () => {
  assert.equal(isTimeToDelete('04', localTime(4, 0)), true);
  assert.equal(isTimeToDelete('04', localTime(4, 59)), true);
  assert.equal(isTimeToDelete('04', localTime(5, 0)), false);
  assert.equal(isTimeToDelete('4', localTime(4)), true);
  assert.equal(isTimeToDelete('01;13;', localTime(13)), true);
  assert.equal(isTimeToDelete('01;13', localTime(12)), false);
  assert.equal(isTimeToDelete('', localTime(4)), false);
});

test('disk space decisions: 82% expired only, 86% forced, 91% full, full stays until <= 85%', () => {
  const r = retentionRatios({ diskMaxUsedSpaceRatio: 75, diskSpaceWarningLevelRatio: 90, diskSpaceCleanForciblyRatio: 85 });
  const at = (cl: number, wasDiskFull = false, lq = 0.1) => evaluateDiskSpace({ commitLogRatio: cl, logicsRatio: lq, wasDiskFull }, r);
  assert.deepEqual(at(0.4), { diskFullReason: null, cleanImmediately: false, spaceToDelete: false, aboveWarning: false });
  assert.deepEqual(at(0.82), { diskFullReason: null, cleanImmediately: false, spaceToDelete: true, aboveWarning: false });
  assert.deepEqual(at(0.86), { diskFullReason: null, cleanImmediately: true, spaceToDelete: true, aboveWarning: false });
  assert.deepEqual(at(0.91), {
    diskFullReason: 'disk full: usage 91% > diskSpaceWarningLevelRatio 90% (commitlog partition)',
    cleanImmediately: true,
    spaceToDelete: true,
    aboveWarning: true,
  });
  assert.match(at(0.87, true).diskFullReason!, /^disk full: usage 87% still > diskSpaceCleanForciblyRatio 85%/);
  assert.equal(at(0.85, true).diskFullReason, null, 'cleared at or below the forcibly ratio');
  assert.equal(at(0.87, false).diskFullReason, null, 'never set between the forcibly and warning ratios');
  assert.match(at(0.2, false, 0.93).diskFullReason!, /usage 93% .*consumequeue partition/);
  assert.deepEqual(at(-1), { diskFullReason: null, cleanImmediately: false, spaceToDelete: true, aboveWarning: false }, 'probe failure: expired files may go');
});

test('usage ratio = ceil(used × 100 / (used + usable)) / 100; statfs probe answers for a real path', () => {
  assert.equal(usedRatioOf(91, 9), 0.91);
  assert.equal(usedRatioOf(1, 299), 0.01);
  assert.equal(usedRatioOf(0, 0), -1);
  const probe = new StatfsDiskUsageProbe();
  const r = probe.usedRatio(os.tmpdir());
  assert.ok(r >= 0 && r <= 1, `ratio ${r}`);
  assert.equal(probe.usedRatio(`${os.tmpdir()}/does/not/exist/yet`), r, 'nearest existing ancestor');
});

test('running flags push only transitions; disk full wins the reason', () => {
  const pushed: Array<[boolean, string]> = [];
  const f = new RunningFlags((w, reason) => pushed.push([w, reason]));
  f.setDiskFull(null);
  f.setWriteError('write failed: EIO x');
  f.setWriteError('write failed: EIO x');
  f.setDiskFull('disk full: usage 91%');
  f.setWriteError(null);
  f.setDiskFull(null);
  assert.deepEqual(pushed, [
    [false, 'write failed: EIO x'],
    [false, 'disk full: usage 91%'],
    [true, ''],
  ]);
  assert.equal(describeWriteError(Object.assign(new Error('no space'), { code: 'ENOSPC' })), 'disk full: write failed with ENOSPC (no space)');
  assert.equal(describeWriteError(Object.assign(new Error('i/o'), { code: 'EIO' })), 'write failed: EIO i/o');
});

test('running flags: the logics queue error refuses writes after disk full and write error, with its prefix', () => {
  const pushed: Array<[boolean, string]> = [];
  const f = new RunningFlags((w, reason) => pushed.push([w, reason]));
  f.setLogicsQueueError('consume-queue dispatch failed at CommitLog offset 0');
  f.setWriteError('write failed: EIO x');
  f.setWriteError(null);
  f.setLogicsQueueError(null);
  assert.deepEqual(pushed, [
    [false, 'logics queue error: consume-queue dispatch failed at CommitLog offset 0'],
    [false, 'write failed: EIO x'],
    [false, 'logics queue error: consume-queue dispatch failed at CommitLog offset 0'],
    [true, ''],
  ]);
  assert.equal(f.hasLogicsQueueError(), false);
});

test('running flags: two logics queue error sources (dispatch, consume-queue-write): the first set is reported, the flag holds until both clear', () => {
  const pushed: Array<[boolean, string]> = [];
  const f = new RunningFlags((w, reason) => pushed.push([w, reason]));
  f.setLogicsQueueError('ConsumeQueue commit failed (topic T, queue 0, entries from queue offset 3 not written): write failed: EIO x', 'consume-queue-write');
  f.setLogicsQueueError('consume-queue dispatch failed at CommitLog offset 960 (topic T, queue 0, queue offset 13): write failed: EIO x', 'dispatch');
  assert.equal(f.hasLogicsQueueError('dispatch'), true);
  assert.equal(f.hasLogicsQueueError('consume-queue-write'), true);
  f.setLogicsQueueError(null, 'consume-queue-write');
  f.setLogicsQueueError(null, 'dispatch');
  assert.deepEqual(pushed, [
    [false, 'logics queue error: ConsumeQueue commit failed (topic T, queue 0, entries from queue offset 3 not written): write failed: EIO x'],
    [false, 'logics queue error: consume-queue dispatch failed at CommitLog offset 960 (topic T, queue 0, queue offset 13): write failed: EIO x'],
    [true, ''],
  ]);
  assert.equal(f.hasLogicsQueueError(), false);
});
