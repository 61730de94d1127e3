import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigFile, ConfigFileCorruptError } from '../../../src/broker/config-file/config-file.js';
import { parseLenientJson, quoteBareKeys } from '../../../src/broker/config-file/lenient-json.js';
import { ConsumerOffsetManager } from '../../../src/broker/offset/consumer-offset-manager.js';
import { ManualClock } from '../../../src/common/time/clock.js';

let dir: string;
const clock = new ManualClock(1_700_000_000_000);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tsmq-cfg-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function offsets(file: string): ConsumerOffsetManager {
  return new ConsumerOffsetManager(file, { clock });
}

describe('lenient JSON (fastjson bare keys)', () => {
  it('quotes bare numeric keys and leaves strings alone', () => {
    assert.equal(quoteBareKeys('{"a":{0:12,1:7},"s":"x{0:1}"}'), '{"a":{"0":12,"1":7},"s":"x{0:1}"}');
    assert.deepEqual(parseLenientJson('{"offsetTable":{"T@G":{0:12,1:7}}}'), { offsetTable: { 'T@G': { '0': 12, '1': 7 } } });
    assert.deepEqual(parseLenientJson('{"a":[1,2,{3:4}]}'), { a: [1, 2, { '3': 4 }] });
  });

  it('still rejects text that is not JSON', () => {
    assert.throws(() => parseLenientJson('{"a":'));
    assert.throws(() => parseLenientJson('garbage'));
  });
});

describe('ConfigFile persistence', () => {
  it('B11 a shorter document leaves no stale bytes; reload holds only g1', async () => {
    const file = join(dir, 'consumerOffset.json');
    const m = offsets(file);
    for (const g of ['g1', 'g2', 'g3']) {
      for (let q = 0; q < 8; q++) m.commitOffset('c', g, 'TopicTest', q, 1000 + q);
    }
    await m.persist();
    const longText = readFileSync(file, 'utf8');
    assert.ok(longText.length > 600, `long document is ${longText.length} bytes`);
    m.removeGroup('g2');
    m.removeGroup('g3');
    await m.persist();
    const shortText = readFileSync(file, 'utf8');
    assert.equal(shortText, JSON.stringify(m.encode(), null, 2));
    assert.ok(shortText.length < 300, `short document is ${shortText.length} bytes`);
    JSON.parse(shortText);
    assert.equal(readFileSync(`${file}.bak`, 'utf8'), longText, 'previous good version kept as .bak');
    assert.equal(existsSync(`${file}.tmp`), false);
    const reloaded = offsets(file);
    assert.equal(reloaded.load(), true);
    assert.deepEqual(reloaded.keys(), ['TopicTest@g1']);
    assert.equal(reloaded.queryOffset('g1', 'TopicTest', 3), 1003);
  });

  it('B11 variant: corrupt primary falls back to the valid .bak and the broker starts with its offsets', async () => {
    const file = join(dir, 'consumerOffset.json');
    const m = offsets(file);
    m.commitOffset('c', 'g1', 'TopicTest', 0, 12);
    await m.persist();
    m.commitOffset('c', 'g1', 'TopicTest', 0, 13);
    await m.persist(); // .bak now holds offset 12
    writeFileSync(file, '{"offsetTable":{"TopicTest@g1":{0:13}'); // torn
    const reloaded = offsets(file);
    assert.equal(reloaded.load(), true);
    assert.equal(reloaded.queryOffset('g1', 'TopicTest', 0), 12);
    assert.equal(existsSync(`${file}.corrupt`), true, 'corrupt primary set aside');
    // The next persist must not rotate the corrupt/missing primary over the good backup.
    reloaded.commitOffset('c', 'g1', 'TopicTest', 0, 14);
    await reloaded.persist();
    const again = offsets(file);
    again.load();
    assert.equal(again.queryOffset('g1', 'TopicTest', 0), 14);
    assert.match(readFileSync(`${file}.bak`, 'utf8'), /"0": 12/);
  });

  it('empty or missing primary loads the backup; never starts empty while a valid backup exists', async () => {
    const file = join(dir, 'delayOffset.json');
    writeFileSync(`${file}.bak`, '{"offsetTable":{"TopicTest@g1":{0:5}}}');
    writeFileSync(file, '');
    const m = offsets(file);
    assert.equal(m.load(), true);
    assert.equal(m.queryOffset('g1', 'TopicTest', 0), 5);
    rmSync(file);
    const m2 = offsets(file);
    assert.equal(m2.load(), true);
    assert.equal(m2.queryOffset('g1', 'TopicTest', 0), 5);
  });

  it('a document of the wrong shape counts as corrupt and falls back too', () => {
    const file = join(dir, 'consumerOffset.json');
    writeFileSync(file, '{"offsetTable":{"no-separator":{"0":1}}}');
    writeFileSync(`${file}.bak`, '{"offsetTable":{"T@g":{"0":3}}}');
    const m = offsets(file);
    m.load();
    assert.equal(m.queryOffset('g', 'T', 0), 3);
  });

  it('both files corrupt: refuses to load (throws) instead of starting empty', () => {
    const file = join(dir, 'consumerOffset.json');
    writeFileSync(file, '{broken');
    writeFileSync(`${file}.bak`, 'also broken');
    assert.throws(() => offsets(file).load(), ConfigFileCorruptError);
  });

  it('nothing on disk: starts empty', () => {
    const m = offsets(join(dir, 'none.json'));
    assert.equal(m.load(), false);
    assert.deepEqual(m.keys(), []);
  });

  it('reads Apache-written files with bare numeric keys', () => {
    const file = join(dir, 'consumerOffset.json');
    writeFileSync(file, '{"offsetTable":{"TopicTest@please_rename_unique_group_name_4":{0:250,1:250,2:249,3:251}},"dataVersion":{"counter":3,"timestamp":1}}');
    const m = offsets(file);
    m.load();
    assert.equal(m.queryOffset('please_rename_unique_group_name_4', 'TopicTest', 2), 249);
    assert.equal(m.dataVersion.counter, 3);
  });

  it('coalesces persists requested while a write is queued: one write of the latest document', async () => {
    const cf = new ConfigFile(join(dir, 'x.json'));
    await Promise.all([cf.persist('{"v":1}'), cf.persist('{"v":2}'), cf.persist('{"v":3}')]);
    assert.equal(readFileSync(join(dir, 'x.json'), 'utf8'), '{"v":3}');
    assert.equal(cf.writesCompleted, 1, 'three requests in one turn: one write');
    assert.equal(existsSync(join(dir, 'x.json.bak')), false, 'no earlier document was ever written');
  });

  it('renders lazily: requests during a running write share one follow-up write of the state when it starts', async () => {
    const cf = new ConfigFile(join(dir, 'x.json'));
    let state = 0;
    let renders = 0;
    const render = (): string => {
      renders++;
      return JSON.stringify({ v: state });
    };
    state = 1;
    const first = cf.persist(render);
    await new Promise((r) => setImmediate(r)); // the first write is now running
    assert.equal(cf.busy, true);
    const later: Promise<void>[] = [];
    for (let i = 2; i <= 1000; i++) {
      state = i;
      later.push(cf.persist(render));
    }
    assert.equal(new Set(later).size, 1, '999 requests share one queued write');
    await first;
    await Promise.all(later);
    assert.equal(renders, 2);
    assert.equal(cf.writesCompleted, 2);
    assert.equal(readFileSync(join(dir, 'x.json'), 'utf8'), '{"v":1000}');
    assert.equal(readFileSync(join(dir, 'x.json.bak'), 'utf8'), '{"v":1}');
  });

  it('idle() waits for the write that covers every change so far, not for later ones', async () => {
    const cf = new ConfigFile(join(dir, 'x.json'));
    assert.equal(cf.busy, false);
    await cf.idle(); // nothing pending: resolves at once
    void cf.persist('{"v":1}');
    const covered = cf.idle();
    await covered;
    assert.equal(readFileSync(join(dir, 'x.json'), 'utf8'), '{"v":1}');
    assert.equal(cf.busy, false);
  });
});
