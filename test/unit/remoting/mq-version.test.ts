/**
 * versionDesc against Apache 5.3.3's MQVersion.Version enum at every range boundary (the whole
 * enum, 613 names, was compared once against the enum source; these are its checkpoints).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { versionDesc } from '../../../src/remoting/protocol/mq-version.js';

describe('versionDesc (MQVersion.getVersionDesc)', () => {
  it('names the ordinals as the 5.3.3 enum does', () => {
    const expected: Array<[number, string]> = [
      [0, 'V3_0_0_SNAPSHOT'], [1, 'V3_0_0_ALPHA1'], [14, 'V3_0_0_BETA9'], [15, 'V3_0_0_FINAL'],
      [16, 'V3_0_1_SNAPSHOT'], [17, 'V3_0_1'], [45, 'V3_0_15'],
      [46, 'V3_1_0_SNAPSHOT'], [85, 'V3_2_9'],
      [86, 'V3_3_1_SNAPSHOT'], [120, 'V3_4_9_SNAPSHOT'], [121, 'V3_4_9'], [122, 'V3_5_1_SNAPSHOT'], [211, 'V3_9_9'],
      [212, 'V4_0_0_SNAPSHOT'], [213, 'V4_0_0'], [401, 'V4_9_4'], [409, 'V4_9_8'], [412, 'V5_0_0_SNAPSHOT'], [413, 'V5_0_0'],
      [479, 'V5_3_3'], [611, 'V5_9_9'], [612, 'HIGHER_VERSION'], [10_000, 'HIGHER_VERSION'],
    ];
    for (const [ordinal, name] of expected) assert.equal(versionDesc(ordinal), name, `ordinal ${ordinal}`);
  });

  it('a value no client sends is shown as such', () => {
    assert.equal(versionDesc(-1), 'ordinal -1');
    assert.equal(versionDesc(1.5), 'ordinal 1.5');
  });
});
