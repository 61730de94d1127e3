/**
 * PopStateTable property (fast-check): any sequence of POP / ACK / MOVE / RESET records gives the
 * same table whether applied at once, or split anywhere into a snapshot (toSnapshot → loadSnapshot,
 * what compaction and replica sync write) plus the rest replayed as a log, and whether the log is
 * read back through the record codec (encode → decodePopLog) — the RESET record included.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PopStateTable, type PopRecord } from '../../../src/broker/pop/pop-state-table.js';
import { decodePopLog, encodePopRecord } from '../../../src/broker/pop/pop-record-codec.js';

const ref = fc.record({ group: fc.constantFrom('G', 'H'), topic: fc.constant('T'), queueId: fc.integer({ min: 0, max: 1 }) });
const offset = fc.integer({ min: 0, max: 12 });
const version = fc.integer({ min: 1, max: 40 });
const record: fc.Arbitrary<PopRecord> = fc.oneof(
  fc.tuple(ref, offset, fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 5000 }), version).map(([r, o, attempts, invisibleUntilMs, v]) => ({ type: 'POP' as const, ...r, offset: o, attempts, invisibleUntilMs, version: v })),
  fc.tuple(ref, offset, version).map(([r, o, v]) => ({ type: 'ACK' as const, ...r, offset: o, version: v })),
  fc.tuple(ref, offset).map(([r, o]) => ({ type: 'MOVE' as const, ...r, offset: o })),
  fc.tuple(ref, offset).map(([r, o]) => ({ type: 'RESET' as const, ...r, offset: o })),
);

const canonical = (t: PopStateTable): unknown => [...t.toSnapshot()].sort((a, b) => `${a.group}/${a.queueId}`.localeCompare(`${b.group}/${b.queueId}`));

test('pop state: live = snapshot at any point + log replay = codec round trip', () => {
  fc.assert(
    fc.property(fc.array(record, { maxLength: 60 }), fc.nat(), (recs, cutSeed) => {
      const live = new PopStateTable();
      for (const r of recs) live.apply(r);
      const cut = recs.length === 0 ? 0 : cutSeed % (recs.length + 1);
      const before = new PopStateTable();
      for (const r of recs.slice(0, cut)) before.apply(r);
      const restored = new PopStateTable();
      restored.loadSnapshot(JSON.parse(JSON.stringify(before.toSnapshot())));
      const log = decodePopLog(Buffer.concat(recs.slice(cut).map(encodePopRecord)));
      assert.equal(log.stopReason ?? null, null);
      for (const r of log.records) restored.apply(r);
      assert.deepEqual(canonical(restored), canonical(live));
    }),
    { numRuns: 2000 },
  );
});
