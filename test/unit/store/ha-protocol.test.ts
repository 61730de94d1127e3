import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeHeartbeat, encodeReport, FrameReader, HAProtocolError, ReportReader, writeFrameHeader, type FrameEvent } from '../../../src/store/ha/ha-protocol.js';

function frame(offset: number, body: Buffer): Buffer {
  const b = Buffer.alloc(12 + body.length);
  writeFrameHeader(b, 0, offset, body.length);
  body.copy(b, 12);
  return b;
}

describe('HA wire format (spec §9)', () => {
  it('an offset report is 8 bytes big-endian; a heartbeat is a 12-byte header with size 0', () => {
    assert.deepEqual([...encodeReport(1_000_000)], [0, 0, 0, 0, 0, 0x0f, 0x42, 0x40]);
    assert.deepEqual([...encodeHeartbeat(5000)], [0, 0, 0, 0, 0, 0, 0x13, 0x88, 0, 0, 0, 0]);
    assert.throws(() => encodeReport(-1), RangeError);
  });

  it('ReportReader keeps alignment across chunks and returns the newest complete report', () => {
    const r = new ReportReader();
    const all = Buffer.concat([encodeReport(10), encodeReport(20), encodeReport(30)]);
    assert.equal(r.push(all.subarray(0, 5)), null);
    assert.equal(r.push(all.subarray(5, 19)), 20); // completes 10 and 20
    assert.equal(r.push(all.subarray(19, 23)), null);
    assert.equal(r.push(all.subarray(23)), 30);
    const neg = Buffer.alloc(8, 0xff); // -1
    assert.ok(Number.isNaN(r.push(neg)!));
  });

  it('FrameReader hands out headers and body pieces without reassembly, also for split headers', () => {
    const stream = Buffer.concat([frame(4096, Buffer.from('abcdefgh')), encodeHeartbeat(4104), frame(4104, Buffer.from('xyz'))]);
    for (const cut of [1, 5, 11, 12, 13, 17, 25, 30]) {
      const reader = new FrameReader(1 << 20);
      const events: FrameEvent[] = [...reader.push(stream.subarray(0, cut)), ...reader.push(stream.subarray(cut))];
      const headers = events.filter((e) => e.kind === 'header').map((e) => (e.kind === 'header' ? [e.offset, e.bodySize] : []));
      assert.deepEqual(headers, [[4096, 8], [4104, 0], [4104, 3]], `cut at ${cut}`);
      const body = Buffer.concat(events.flatMap((e) => (e.kind === 'body' ? [e.chunk.subarray(e.start, e.start + e.length)] : [])));
      assert.equal(body.toString(), 'abcdefghxyz');
      const pieces = events.filter((e) => e.kind === 'body');
      assert.equal(pieces[0]!.kind === 'body' && pieces[0]!.offset, 4096);
      assert.equal(reader.idle, true);
    }
  });

  it('FrameReader rejects a negative or oversized body size', () => {
    const bad = Buffer.alloc(12);
    bad.writeBigInt64BE(0n, 0);
    bad.writeInt32BE(-5, 8);
    assert.throws(() => [...new FrameReader(100).push(bad)], HAProtocolError);
    bad.writeInt32BE(101, 8);
    assert.throws(() => [...new FrameReader(100).push(bad)], HAProtocolError);
  });
});
