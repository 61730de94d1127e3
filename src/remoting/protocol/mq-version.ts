/**
 * Apache `MQVersion.getVersionDesc`: the MQVersion.Version name of the remoting `version` ordinal
 * a client sends in its request header (e.g. 121 → "V3_4_9", 401 → "V4_9_4", 479 → "V5_3_3").
 * The enum (rocketmq-common 5.3.3) holds a SNAPSHOT and a release per version:
 *   0..15     V3_0_0_SNAPSHOT, its alphas and betas, V3_0_0_FINAL (listed below)
 *   16..45    V3_0_1 .. V3_0_15
 *   46..85    V3_1_0 .. V3_2_9
 *   86..211   V3_3_1 .. V3_9_9 (patches 1..9 of each minor)
 *   212..611  V4_0_0 .. V5_9_9 (V4_a_b = 213 + 2·(10a + b), V5_a_b = 413 + 2·(10a + b))
 *   612 and above: HIGHER_VERSION (Apache maps every larger value to the last entry).
 * A negative or fractional value gives "ordinal <n>" (Apache would throw).
 */
export function versionDesc(ordinal: number): string {
  if (!Number.isInteger(ordinal) || ordinal < 0) return `ordinal ${ordinal}`;
  if (ordinal >= 612) return 'HIGHER_VERSION';
  if (ordinal < 16) return V3_0_0_NAMES[ordinal]!;
  const name = (major: number, minor: number, patch: number, offset: number): string =>
    `V${major}_${minor}_${patch}${offset % 2 === 0 ? '_SNAPSHOT' : ''}`;
  if (ordinal < 46) return name(3, 0, 1 + Math.floor((ordinal - 16) / 2), ordinal - 16);
  if (ordinal < 86) {
    const k = Math.floor((ordinal - 46) / 2);
    return name(3, 1 + Math.floor(k / 10), k % 10, ordinal - 46);
  }
  if (ordinal < 212) {
    const k = Math.floor((ordinal - 86) / 2);
    return name(3, 3 + Math.floor(k / 9), 1 + (k % 9), ordinal - 86);
  }
  const k = Math.floor((ordinal - 212) / 2); // 10·minor + patch within the major
  return name(4 + Math.floor(k / 100), Math.floor((k % 100) / 10), k % 10, ordinal - 212);
}

const V3_0_0_NAMES = [
  'V3_0_0_SNAPSHOT', 'V3_0_0_ALPHA1', 'V3_0_0_BETA1', 'V3_0_0_BETA2', 'V3_0_0_BETA3', 'V3_0_0_BETA4', 'V3_0_0_BETA5',
  'V3_0_0_BETA6_SNAPSHOT', 'V3_0_0_BETA6', 'V3_0_0_BETA7_SNAPSHOT', 'V3_0_0_BETA7', 'V3_0_0_BETA8_SNAPSHOT', 'V3_0_0_BETA8',
  'V3_0_0_BETA9_SNAPSHOT', 'V3_0_0_BETA9', 'V3_0_0_FINAL',
];
