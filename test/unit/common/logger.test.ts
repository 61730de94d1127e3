import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { wrapPino } from '../../../src/common/logging/logger.js';

function capture() {
  const lines: string[] = [];
  const base = pino({ level: 'debug', base: { pid: 1 }, timestamp: false }, { write: (s: string) => void lines.push(s) });
  return { lines, logger: wrapPino(base) };
}

test('nested components log one "component" key holding the path (broker.store.ha)', () => {
  const { lines, logger } = capture();
  const ha = logger.child({ component: 'broker' }).child({ component: 'store' }).child({ component: 'ha' });
  ha.info({ haListenPort: 10912 }, 'HA service listening');
  ha.warn('plain text');
  assert.equal(lines.length, 2);
  assert.equal(lines[0], '{"level":30,"pid":1,"component":"broker.store.ha","haListenPort":10912,"msg":"HA service listening"}\n');
  assert.equal(lines[1], '{"level":40,"pid":1,"component":"broker.store.ha","msg":"plain text"}\n');
  assert.equal(lines[0]!.split('"component"').length - 1, 1);
});

test('other bindings of a child replace the parent value instead of repeating the key', () => {
  const { lines, logger } = capture();
  const l = logger.child({ component: 'broker', queue: 1 }).child({ queue: 2 });
  l.error({ n: 3 }, 'x');
  l.debug('d');
  assert.deepEqual(lines, ['{"level":50,"pid":1,"component":"broker","queue":2,"n":3,"msg":"x"}\n', '{"level":20,"pid":1,"component":"broker","queue":2,"msg":"d"}\n']);
});
