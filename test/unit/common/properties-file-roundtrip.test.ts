/**
 * setPropertiesInText property: for any Properties text and any updates, loading the result
 * gives the loaded original with the updates applied (nothing else changed, no update lost),
 * whatever the original's continuations, comments, duplicates or trailing backslash.
 * parsePropertiesText is held to Java's Properties.load by properties-text-java-diff.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parsePropertiesText, PropertiesSyntaxError } from '../../../src/common/config/properties-text.js';
import { setPropertiesInText } from '../../../src/common/config/properties-file.js';

const unit = fc.constantFrom('a', 'b', '=', ':', ' ', '\t', '\\', '\\', '\n', '\r', '#', '!', 'é');
const text = fc.string({ unit, maxLength: 30 });
const key = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\\', '=', '#'), maxLength: 3 });
const value = fc.string({ unit, maxLength: 8 });

function loads(t: string): Map<string, string> | null {
  try {
    return parsePropertiesText(t);
  } catch (e) {
    if (e instanceof PropertiesSyntaxError) return null;
    throw e;
  }
}

describe('setPropertiesInText round trip', () => {
  it('a text ending in a continuation backslash does not swallow an appended key', () => {
    const out = setPropertiesInText('a=b\\', new Map([['k', 'v']]));
    assert.deepEqual([...parsePropertiesText(out)], [['a', 'b'], ['k', 'v']]);
  });

  it('load(set(text, updates)) = load(text) with the updates applied (fast-check)', () => {
    fc.assert(
      fc.property(text, fc.array(fc.tuple(key, value), { maxLength: 3 }), (t, ups) => {
        const before = loads(t);
        fc.pre(before !== null);
        const updates = new Map(ups);
        const expected = new Map(before);
        for (const [k, v] of updates) expected.set(k, v);
        const after = parsePropertiesText(setPropertiesInText(t, updates));
        assert.deepEqual(new Map([...after].sort()), new Map([...expected].sort()));
      }),
      { numRuns: 3000 },
    );
  });
});
