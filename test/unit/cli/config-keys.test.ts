/**
 * Unknown config keys are ignored (as RocketMQ does) but each gets one warning, with the close
 * known key when there is one.
 */
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { editDistance, findUnknownKeys, suggestKnownKey, unknownKeyWarning } from '../../../src/common/config/config-spec.js';
import { readPropertiesFile } from '../../../src/common/config/properties-file.js';
import { brokerConfigKeys, namesrvConfigKeys, warnUnknownConfigKeys } from '../../../src/cli/config-keys.js';
import { capturingLogger } from '../../support/store-fixtures.js';

test('edit distance counts insertions, deletions, substitutions and neighbour swaps as 1', () => {
  assert.equal(editDistance('listenport', 'listenport'), 0);
  assert.equal(editDistance('strat', 'start'), 1);
  assert.equal(editDistance('mapedfile', 'mappedfile'), 1);
  assert.equal(editDistance('abc', 'xyz'), 3);
  assert.equal(editDistance('', 'abc'), 3);
});

test('suggestions: another case first, else a near name; nothing for a far one', () => {
  const known = brokerConfigKeys();
  assert.equal(suggestKnownKey('listenport', known), 'listenPort');
  assert.equal(suggestKnownKey('BROKERNAME', known), 'brokerName');
  assert.equal(suggestKnownKey('mapedFileSizeCommitLog', known), 'mappedFileSizeCommitLog');
  assert.equal(suggestKnownKey('flushDiskTyp', known), 'flushDiskType');
  assert.equal(suggestKnownKey('unknownKey', known), null);
  assert.equal(suggestKnownKey('sendMessageThreadPoolNums', known), null);
});

test('one warning per unknown key, in input order, naming the key and the close known key', () => {
  const logger = capturingLogger();
  const cfg = { listenPort: '10911', unknownKey: '1', listenport: '10999', brokername: 'bx', storePathRootDir: '/x', grpcServerPort: '8081', slaveSynchronizeInterval: '5000' };
  const messages = warnUnknownConfigKeys(cfg, brokerConfigKeys(), logger);
  assert.deepEqual(messages, [
    'config key unknownKey is not used by tsmq and is ignored',
    'config key listenport is not used by tsmq and is ignored (did you mean listenPort?)',
    'config key brokername is not used by tsmq and is ignored (did you mean brokerName?)',
  ]);
  assert.deepEqual(
    logger.lines.map((l) => [l.level, l.msg]),
    messages.map((m) => ['warn', m]),
  );
  assert.deepEqual(findUnknownKeys({ host: '0.0.0.0', listenPort: '9876', listenport: '1' }, namesrvConfigKeys()), [{ key: 'listenport', suggestion: 'listenPort' }]);
  assert.equal(unknownKeyWarning({ key: 'x', suggestion: null }), 'config key x is not used by tsmq and is ignored');
});

test('the shipped example broker.conf files use only known keys', () => {
  for (const name of ['master.conf', 'slave.conf']) {
    const file = fileURLToPath(new URL(`../../../examples/ha/${name}`, import.meta.url));
    assert.deepEqual(findUnknownKeys(readPropertiesFile(file), brokerConfigKeys()), [], file);
  }
});
