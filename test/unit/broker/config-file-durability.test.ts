/**
 * Crash safety of the config/ JSON files (spec §3.9, case B11) beyond config-file.test.ts:
 * the persist order (temp file fsynced before any rename, directory fsynced after), every
 * manager's file (topics, subscription groups, delay offsets, consumer offsets), states a crash
 * can leave between the steps, and failed writes (ENOSPC, fsync error) that must leave the
 * previous documents intact.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { ConfigFile } from '../../../src/broker/config-file/config-file.js';
import type { ConfigManager } from '../../../src/broker/config-file/config-manager.js';
import { ConsumerOffsetManager } from '../../../src/broker/offset/consumer-offset-manager.js';
import { DelayLevelTable } from '../../../src/broker/schedule/delay-level-table.js';
import { ScheduleMessageService } from '../../../src/broker/schedule/schedule-message-service.js';
import { SubscriptionGroupManager } from '../../../src/broker/subscription/subscription-group-manager.js';
import { newTopicConfig } from '../../../src/broker/topic/topic-config.js';
import { TopicConfigManager } from '../../../src/broker/topic/topic-config-manager.js';
import type { OpenMode } from '../../../src/common/fs/file-system.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import type { MessageStore } from '../../../src/store/message-store.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';

let dir: string;
const clock = new ManualClock(1_700_000_000_000);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tsmq-cfg-dur-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Records the file-system calls of a persist, with paths relative to the test directory. */
class RecordingFs extends FaultyFileSystem {
  readonly events: string[] = [];
  private readonly paths = new Map<number, string>();
  fsyncErrorCode: string | null = null;
  private rel(p: string): string {
    return relative(dir, p) || '.';
  }
  override open(p: string, mode: OpenMode): number {
    const fd = super.open(p, mode);
    this.paths.set(fd, p);
    this.events.push(`open ${this.rel(p)} ${mode}`);
    return fd;
  }
  override pwrite(fd: number, buf: Buffer, off: number, len: number, pos: number): number {
    this.events.push(`write ${this.rel(this.paths.get(fd)!)}`);
    return super.pwrite(fd, buf, off, len, pos);
  }
  override async fsync(fd: number): Promise<void> {
    this.events.push(`fsync ${this.rel(this.paths.get(fd)!)}`);
    if (this.fsyncErrorCode) throw Object.assign(new Error(`injected ${this.fsyncErrorCode}`), { code: this.fsyncErrorCode });
    return super.fsync(fd);
  }
  override rename(a: string, b: string): void {
    this.events.push(`rename ${this.rel(a)} -> ${this.rel(b)}`);
    super.rename(a, b);
  }
}

describe('ConfigFile persist protocol', () => {
  it('writes and fsyncs <file>.tmp, then renames <file> to .bak and .tmp to <file>, then fsyncs the directory', async () => {
    const fs = new RecordingFs();
    const cf = new ConfigFile(join(dir, 'topics.json'), { fs });
    await cf.persist('{"v":1}');
    await cf.persist('{"v":2}');
    const second = fs.events.slice(fs.events.lastIndexOf('open topics.json.tmp w+'));
    assert.deepEqual(second, [
      'open topics.json.tmp w+',
      'write topics.json.tmp',
      'fsync topics.json.tmp',
      'rename topics.json -> topics.json.bak',
      'rename topics.json.tmp -> topics.json',
      'open . r',
      'fsync .',
    ]);
    assert.equal(readFileSync(join(dir, 'topics.json'), 'utf8'), '{"v":2}');
    assert.equal(readFileSync(join(dir, 'topics.json.bak'), 'utf8'), '{"v":1}');
  });

  it('a stale, longer .tmp left by a crash never leaks into the new document', async () => {
    const file = join(dir, 'consumerOffset.json');
    writeFileSync(`${file}.tmp`, `{"offsetTable":{${'"x@y":{"0":1},'.repeat(50)}`);
    const cf = new ConfigFile(file);
    await cf.persist('{"offsetTable":{}}');
    assert.equal(readFileSync(file, 'utf8'), '{"offsetTable":{}}');
    assert.equal(existsSync(`${file}.tmp`), false);
  });

  it('crash after "<file> → .bak" and before ".tmp → <file>": loads the backup; the next persist keeps that backup', async () => {
    const file = join(dir, 'subscriptionGroup.json');
    const cf = new ConfigFile(file);
    await cf.persist('{"v":1}');
    // the crash state: primary already moved to .bak, the new document only in .tmp
    renameSync(file, `${file}.bak`);
    writeFileSync(`${file}.tmp`, '{"v":2}');
    const after = new ConfigFile(file);
    assert.deepEqual(after.load((t) => JSON.parse(t)), { v: 1 });
    assert.equal(after.lastLoadSource, 'backup');
    await after.persist('{"v":3}');
    assert.equal(readFileSync(file, 'utf8'), '{"v":3}');
    assert.equal(readFileSync(`${file}.bak`, 'utf8'), '{"v":1}', 'a missing primary is not rotated over the good backup');
  });

  it('ENOSPC while writing the new document: persist fails, <file> and .bak keep their bytes, a later persist works', async () => {
    const fs = new RecordingFs();
    const file = join(dir, 'delayOffset.json');
    const cf = new ConfigFile(file, { fs });
    await cf.persist('{"v":1}');
    await cf.persist('{"v":2}');
    fs.pwriteErrorCode = 'ENOSPC';
    await assert.rejects(cf.persist('{"v":3,"long":"................................"}'), /ENOSPC/);
    assert.equal(readFileSync(file, 'utf8'), '{"v":2}');
    assert.equal(readFileSync(`${file}.bak`, 'utf8'), '{"v":1}');
    assert.deepEqual(new ConfigFile(file).load((t) => JSON.parse(t)), { v: 2 });
    fs.pwriteErrorCode = null;
    await cf.persist('{"v":4}');
    assert.equal(readFileSync(file, 'utf8'), '{"v":4}');
    assert.equal(readFileSync(`${file}.bak`, 'utf8'), '{"v":2}');
  });

  it('fsync failure of the temp file: nothing is renamed, the previous document stays', async () => {
    const fs = new RecordingFs();
    const file = join(dir, 'topics.json');
    const cf = new ConfigFile(file, { fs });
    await cf.persist('{"v":1}');
    fs.fsyncErrorCode = 'EIO';
    fs.events.length = 0;
    await assert.rejects(cf.persist('{"v":2}'), /EIO/);
    assert.equal(fs.events.some((e) => e.startsWith('rename')), false);
    assert.equal(readFileSync(file, 'utf8'), '{"v":1}');
  });
});

interface Case {
  name: string;
  make: (file: string) => ConfigManager;
  /** Fills the manager with a long document. */
  fill: (m: ConfigManager) => void;
  /** Shrinks it to one entry. */
  shrink: (m: ConfigManager) => void;
  /** The one remaining entry as read back. */
  survivor: (m: ConfigManager) => unknown;
  expectedSurvivor: unknown;
  /** Whether a long-document entry is present. */
  hasLongEntry: (m: ConfigManager) => boolean;
}

const stubStore = { getMinOffsetInQueue: () => 0, getMaxOffsetInQueue: () => 1_000_000 } as unknown as MessageStore;

const cases: Case[] = [
  {
    name: 'topics.json',
    make: (f) => new TopicConfigManager(f, { clock, brokerName: 'broker-a', brokerClusterName: 'DefaultCluster', autoCreateTopicEnable: false }),
    fill: (m) => {
      for (let i = 0; i < 20; i++) (m as TopicConfigManager).updateTopicConfig(newTopicConfig(`Topic${i}`, { readQueueNums: 4, writeQueueNums: 4 }));
    },
    shrink: (m) => {
      for (let i = 1; i < 20; i++) (m as TopicConfigManager).deleteTopicConfig(`Topic${i}`);
    },
    survivor: (m) => (m as TopicConfigManager).selectTopicConfig('Topic0')?.readQueueNums,
    expectedSurvivor: 4,
    hasLongEntry: (m) => (m as TopicConfigManager).selectTopicConfig('Topic7') !== undefined,
  },
  {
    name: 'subscriptionGroup.json',
    make: (f) => new SubscriptionGroupManager(f, { clock, autoCreateSubscriptionGroup: true }),
    fill: (m) => {
      for (let i = 0; i < 20; i++) (m as SubscriptionGroupManager).findSubscriptionGroupConfig(`group${i}`);
    },
    shrink: (m) => {
      for (let i = 1; i < 20; i++) (m as SubscriptionGroupManager).deleteSubscriptionGroupConfig(`group${i}`);
    },
    survivor: (m) => (m as SubscriptionGroupManager).get('group0')?.retryMaxTimes,
    expectedSurvivor: 16,
    hasLongEntry: (m) => (m as SubscriptionGroupManager).get('group7') !== undefined,
  },
  {
    name: 'delayOffset.json',
    make: (f) => new ScheduleMessageService(f, { store: stubStore, delayLevels: new DelayLevelTable('1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h'), clock }),
    fill: (m) => (m as ScheduleMessageService).replaceOffsetTable(new Map(Array.from({ length: 18 }, (_, i) => [i + 1, 100_000 + i] as [number, number]))),
    shrink: (m) => (m as ScheduleMessageService).replaceOffsetTable(new Map([[1, 7]])),
    survivor: (m) => (m as ScheduleMessageService).offsetOf(1),
    expectedSurvivor: 7,
    hasLongEntry: (m) => (m as ScheduleMessageService).offsetOf(7) !== 0,
  },
  {
    name: 'consumerOffset.json',
    make: (f) => new ConsumerOffsetManager(f, { clock }),
    fill: (m) => {
      for (const g of ['g1', 'g2', 'g3']) for (let q = 0; q < 8; q++) (m as ConsumerOffsetManager).commitOffset('c', g, 'TopicTest', q, 1000 + q);
    },
    shrink: (m) => {
      (m as ConsumerOffsetManager).removeGroup('g2');
      (m as ConsumerOffsetManager).removeGroup('g3');
    },
    survivor: (m) => (m as ConsumerOffsetManager).queryOffset('g1', 'TopicTest', 3),
    expectedSurvivor: 1003,
    hasLongEntry: (m) => (m as ConsumerOffsetManager).queryOffset('g2', 'TopicTest', 3) === 1003,
  },
];

describe('B11 for every config file', () => {
  for (const c of cases) {
    it(`${c.name}: a shorter document leaves no stale bytes; a corrupt primary falls back to the .bak copy`, async () => {
      const file = join(dir, c.name);
      const m = c.make(file);
      c.fill(m);
      await m.whenPersisted();
      await m.persist();
      const longText = readFileSync(file, 'utf8');
      c.shrink(m);
      await m.whenPersisted();
      await m.persist();
      const shortText = readFileSync(file, 'utf8');
      assert.ok(shortText.length < longText.length, `${basename(file)} shrank (${longText.length} → ${shortText.length})`);
      assert.equal(shortText, JSON.stringify(m.encode(), null, 2), 'exactly the new document');
      const reloaded = c.make(file);
      assert.equal(reloaded.load(), true);
      assert.equal(c.survivor(reloaded), c.expectedSurvivor);
      assert.equal(c.hasLongEntry(reloaded), false);
      // torn primary (a crash of a non-atomic writer): the previous version in .bak is used
      writeFileSync(file, shortText.slice(0, Math.floor(shortText.length / 2)));
      const backupText = readFileSync(`${file}.bak`, 'utf8');
      const fallback = c.make(file);
      assert.equal(fallback.load(), true, 'starts from the backup, not empty');
      assert.equal(c.survivor(fallback), c.expectedSurvivor);
      assert.equal(existsSync(`${file}.corrupt`), true, 'the torn primary is set aside');
      const copy = join(dir, `copy-${c.name}`);
      writeFileSync(copy, backupText);
      const fromBackup = c.make(copy);
      fromBackup.load();
      assert.equal(JSON.stringify(fallback.encode()), JSON.stringify(fromBackup.encode()), 'state = the .bak document');
    });
  }
});
