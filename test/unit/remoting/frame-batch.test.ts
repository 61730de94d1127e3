import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { createRequestCommand, createResponseCommand } from '../../../src/remoting/protocol/commands.js';
import { encodeFrame, encodeFrameInto, FrameDecoder } from '../../../src/remoting/protocol/frame-codec.js';
import { FrameBatch } from '../../../src/remoting/protocol/frame-batch.js';
import { mulberry32 } from '../../support/prng.js';

function command(next: () => number, i: number): RemotingCommand {
  const r = next();
  const bodyLength = r < 0.6 ? 0 : r < 0.9 ? Math.floor(next() * 2000) : r < 0.97 ? 10_000 + Math.floor(next() * 10_000) : 70_000;
  const req = createRequestCommand(310, null);
  const cmd = createResponseCommand(req, i % 7 === 0 ? 17 : 0, i % 7 === 0 ? `remark ${i} é` : null, { msgId: `ID${i}`, queueId: i % 4, queueOffset: i * 3, MSG_REGION: 'DefaultRegion', TRACE_ON: 'true' }, bodyLength ? Buffer.alloc(bodyLength, i % 251) : null);
  if (next() < 0.3) cmd.serializeTypeCurrentRPC = 1;
  return cmd;
}

test('batches are byte for byte the concatenation of encodeFrame, across chunk ends and large frames', () => {
  for (let seed = 1; seed <= 30; seed++) {
    const next = mulberry32(seed);
    const batch = new FrameBatch();
    const taken: Array<{ pieces: Buffer[]; want: Buffer }> = [];
    let i = 0;
    for (let round = 0; round < 12; round++) {
      const cmds = Array.from({ length: 1 + Math.floor(next() * 60) }, () => command(next, i++));
      for (const c of cmds) batch.add(c);
      const want = Buffer.concat(cmds.map(encodeFrame));
      assert.equal(batch.count, cmds.length);
      assert.equal(batch.byteLength, want.length);
      const pieces = batch.take();
      assert.equal(batch.count, 0);
      assert.deepEqual(Buffer.concat(pieces), want, `seed ${seed} round ${round}`);
      taken.push({ pieces, want });
    }
    // later batches never write over the bytes handed out earlier
    for (const [round, t] of taken.entries()) assert.deepEqual(Buffer.concat(t.pieces), t.want, `seed ${seed}: round ${round} intact`);
  }
});

test('small frames of one turn come back as one buffer; a large body is its own piece, not copied', () => {
  const batch = new FrameBatch();
  const small = Array.from({ length: 50 }, (_, i) => createResponseCommand(createRequestCommand(310), 0, null, { queueOffset: i }));
  for (const c of small) batch.add(c);
  const pieces = batch.take();
  assert.equal(pieces.length, 1);
  const decoded: RemotingCommand[] = [];
  new FrameDecoder((c) => decoded.push(c)).push(pieces[0]!);
  assert.deepEqual(decoded.map((c) => c.opaque), small.map((c) => c.opaque));
  const big = createResponseCommand(createRequestCommand(11), 0, null, null, Buffer.alloc(100_000, 7));
  batch.add(small[0]!);
  batch.add(big);
  batch.add(small[1]!);
  const three = batch.take();
  // [small 0 + big's length words and header] [big's body itself] [small 1]
  assert.equal(three.length, 3);
  assert.equal(three[1], big.body, 'the body buffer is handed to the socket as it is');
  assert.deepEqual(three[0], Buffer.concat([encodeFrame(small[0]!), encodeFrame(big).subarray(0, encodeFrame(big).length - 100_000)]));
  assert.deepEqual(Buffer.concat(three), Buffer.concat([encodeFrame(small[0]!), encodeFrame(big), encodeFrame(small[1]!)]));
});

test('an encode error leaves the batch as it was', () => {
  const batch = new FrameBatch();
  const ok = createResponseCommand(createRequestCommand(310), 0, null, { a: 1 });
  batch.add(ok);
  const bad: RemotingCommand = { ...ok, code: 200050, serializeTypeCurrentRPC: 1 }; // code does not fit int16
  assert.throws(() => batch.add(bad), RangeError);
  batch.add(ok);
  assert.equal(batch.count, 2);
  assert.deepEqual(Buffer.concat(batch.take()), Buffer.concat([encodeFrame(ok), encodeFrame(ok)]));
});

test('encodeFrameInto writes encodeFrame bytes at an offset, or -1 and nothing before the offset when they do not fit', () => {
  const cmd = createResponseCommand(createRequestCommand(310), 0, 'r', { k: 'v' }, Buffer.from('body'));
  const frame = encodeFrame(cmd);
  const out = Buffer.alloc(frame.length + 10, 0xee);
  assert.equal(encodeFrameInto(cmd, out, 5), 5 + frame.length);
  assert.deepEqual(out.subarray(5, 5 + frame.length), frame);
  assert.equal(out[4], 0xee);
  assert.equal(out[5 + frame.length], 0xee);
  const small = Buffer.alloc(frame.length - 1, 0xee);
  assert.equal(encodeFrameInto(cmd, small, 0), -1);
  // the header fits, the body does not: -1; only the room from the offset on was used
  const headerOnly = Buffer.alloc(5 + frame.length - 2, 0xee);
  assert.equal(encodeFrameInto(cmd, headerOnly, 5), -1);
  assert.ok(headerOnly.subarray(0, 5).every((b) => b === 0xee), 'nothing before the offset');
  // a header that does not fit at all: -1, nothing past the end (the buffer is a view of a larger one)
  const backing = Buffer.alloc(64, 0xee);
  assert.equal(encodeFrameInto(cmd, backing.subarray(0, 40), 4), -1);
  assert.ok(backing.subarray(40).every((b) => b === 0xee), 'nothing past the end');
  assert.ok(backing.subarray(0, 4).every((b) => b === 0xee), 'nothing before the offset');
  // and a frame that fits after a failed attempt is exact
  const room = Buffer.alloc(frame.length + 3, 0xee);
  assert.equal(encodeFrameInto(cmd, room, 3), 3 + frame.length);
  assert.deepEqual(room.subarray(3), frame);
});

test('a batch of small frames larger than a chunk is still one buffer, bytes intact', () => {
  const batch = new FrameBatch();
  const cmds = Array.from({ length: 3000 }, (_, i) => createResponseCommand(createRequestCommand(310), 0, null, { msgId: `M${i}`, queueOffset: i }, i % 10 === 0 ? Buffer.alloc(900, i % 256) : null));
  for (const c of cmds) batch.add(c);
  const pieces = batch.take();
  assert.equal(pieces.length, 1);
  assert.ok(pieces[0]!.length > 3 * 64 * 1024);
  assert.deepEqual(pieces[0], Buffer.concat(cmds.map(encodeFrame)));
});

test('an idle connection keeps a small chunk; one writing many frames per turn grows to the largest (soak9: 64 KiB per idle connection)', () => {
  const MIN_CHUNK_BYTES = 4 * 1024; // frame-batch.ts MIN_CHUNK_BYTES / MAX_CHUNK_BYTES
  const MAX_CHUNK_BYTES = 64 * 1024;
  const reply = (i: number) => createResponseCommand(createRequestCommand(11), 19, null, { nextBeginOffset: i, minOffset: 0, maxOffset: i, suggestWhichBrokerId: 0 });
  // a held long poll answered now and then: one small frame per take(), thousands of times
  const idle = new FrameBatch();
  const want: Buffer[] = [];
  const got: Buffer[] = [];
  for (let i = 0; i < 3000; i++) {
    const c = reply(i);
    idle.add(c);
    want.push(encodeFrame(c));
    got.push(...idle.take());
    assert.ok(idle.chunkCapacity <= MIN_CHUNK_BYTES, `after ${i + 1} replies the idle batch holds ${idle.chunkCapacity} bytes`);
  }
  assert.deepEqual(Buffer.concat(got), Buffer.concat(want), 'bytes handed out earlier are never overwritten');
  // a pipelining client: hundreds of replies per turn
  const busy = new FrameBatch();
  for (let round = 0; round < 20; round++) {
    for (let i = 0; i < 300; i++) busy.add(reply(i));
    busy.take();
  }
  assert.equal(busy.chunkCapacity, MAX_CHUNK_BYTES);
  // and it shrinks back once the turns carry one small reply each
  for (let i = 0; i < 20_000 && busy.chunkCapacity > MIN_CHUNK_BYTES; i++) {
    busy.add(reply(i));
    busy.take();
  }
  assert.equal(busy.chunkCapacity, MIN_CHUNK_BYTES);
});

test('500 connections with one small reply each hold a few MiB of chunks, not 500 x 64 KiB', () => {
  const before = process.memoryUsage().arrayBuffers;
  const batches: FrameBatch[] = [];
  for (let i = 0; i < 500; i++) {
    const b = new FrameBatch();
    b.add(createResponseCommand(createRequestCommand(11), 19, null, { nextBeginOffset: i, minOffset: 0, maxOffset: i }));
    b.take();
    batches.push(b);
  }
  const grownBytes = process.memoryUsage().arrayBuffers - before;
  assert.equal(batches.length, 500);
  assert.ok(grownBytes < 500 * 16 * 1024, `500 idle batches hold ${grownBytes} bytes`);
});
