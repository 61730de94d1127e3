import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { createRequestCommand, createResponseCommand } from '../../../src/remoting/protocol/commands.js';
import { DEFAULT_MAX_FRAME_BYTES, decodeFrameBody, encodeFrame, FrameDecoder, FrameError } from '../../../src/remoting/protocol/frame-codec.js';
import { ALI_ONS_GET_ROUTE_FRAME, ALI_ONS_GET_ROUTE_HEX, ALI_ONS_SEND_V2_HEX, ROCKETMQ_BINARY_FRAME } from '../../fixtures/remoting/frames.js';
import { mulberry32 } from '../../support/prng.js';

const require = createRequire(import.meta.url);

function decodeAll(chunks: Buffer[], maxFrameBytes?: number): RemotingCommand[] {
  const out: RemotingCommand[] = [];
  const d = new FrameDecoder((c) => out.push(c), { maxFrameBytes });
  for (const c of chunks) d.push(c);
  assert.equal(d.bufferedBytes, 0);
  return out;
}

function frameOfLength(length: number, headerWord: number, rest: Buffer = Buffer.alloc(0)): Buffer {
  const b = Buffer.alloc(8);
  b.writeInt32BE(length, 0);
  b.writeUInt32BE(headerWord >>> 0, 4);
  return Buffer.concat([b, rest]);
}

/** Seeded PRNG so chunkings are reproducible. */
const rng = mulberry32;

test('golden ali-ons GET_ROUTEINFO_BY_TOPIC frame decodes', () => {
  assert.equal(ALI_ONS_GET_ROUTE_FRAME.toString('hex'), ALI_ONS_GET_ROUTE_HEX);
  const [cmd] = decodeAll([ALI_ONS_GET_ROUTE_FRAME]);
  assert.deepEqual(cmd, {
    code: 105, language: 'JAVA', version: 121, opaque: 1, flag: 0, remark: null,
    extFields: { topic: 'TopicTest' }, serializeTypeCurrentRPC: 0, body: null,
  });
});

test('the golden bytes are what the installed ali-ons encoder produces', () => {
  const RemotingCommand = require('ali-ons/lib/protocol/command/remoting_command.js');
  const c = new RemotingCommand({ code: 105, customHeader: { topic: 'TopicTest' }, opaque: 1 });
  assert.equal(c.encode().toString('hex'), ALI_ONS_GET_ROUTE_HEX);
});

test('ali-ons SEND_MESSAGE_V2 frame keeps JSON types of extFields and the body', () => {
  const [cmd] = decodeAll([Buffer.from(ALI_ONS_SEND_V2_HEX, 'hex')]);
  assert.equal(cmd!.code, 310);
  assert.equal(cmd!.opaque, 2);
  assert.deepEqual(cmd!.extFields, {
    a: 'PID_x', b: 'T', c: 'TBW102', d: 4, e: 0, f: 0, g: 1700000000000, h: 0,
    i: 'TAGS\u0001TagA\u0002', j: 0, k: false,
  });
  assert.equal(cmd!.body!.toString(), 'hello');
});

test('golden frame fed one byte at a time', () => {
  const bytes = Buffer.concat([ALI_ONS_GET_ROUTE_FRAME, Buffer.from(ALI_ONS_SEND_V2_HEX, 'hex'), ROCKETMQ_BINARY_FRAME]);
  const chunks = [...bytes].map((b) => Buffer.from([b]));
  const cmds = decodeAll(chunks);
  assert.deepEqual(cmds.map((c) => c.code), [105, 310, 105]);
  assert.equal(cmds[1]!.body!.toString(), 'hello');
  assert.equal(cmds[2]!.body!.toString(), 'abc');
});

test('random chunkings of many frames decode identically', () => {
  const cmds: RemotingCommand[] = [];
  for (let i = 0; i < 50; i++) {
    const body = i % 3 === 0 ? null : Buffer.alloc(i * 37, i);
    const c = createRequestCommand(10 + i, { topic: `T${i}`, queueId: i, flag: i % 2 === 0 }, body);
    if (i % 4 === 1) c.serializeTypeCurrentRPC = 1;
    cmds.push(c);
  }
  const stream = Buffer.concat(cmds.map(encodeFrame));
  for (let seed = 1; seed <= 20; seed++) {
    const next = rng(seed);
    const chunks: Buffer[] = [];
    for (let p = 0; p < stream.length;) {
      const n = 1 + Math.floor(next() * 300);
      chunks.push(stream.subarray(p, p + n));
      p += n;
    }
    const got = decodeAll(chunks);
    assert.equal(got.length, cmds.length, `seed ${seed}`);
    got.forEach((g, i) => {
      const want = cmds[i]!;
      assert.equal(g.code, want.code);
      assert.equal(g.opaque, want.opaque);
      assert.equal(g.serializeTypeCurrentRPC, want.serializeTypeCurrentRPC);
      // extFields are written as strings, like Apache.
      assert.deepEqual(g.extFields, { topic: `T${i}`, queueId: String(i), flag: String(i % 2 === 0) });
      assert.deepEqual(g.body, want.body && want.body.length > 0 ? want.body : null);
    });
  }
});

test('JSON header is written like fastjson: sorted keys, string extFields, type name', () => {
  const req = createRequestCommand(105, { topic: 'T' });
  const resp = createResponseCommand(req, 17, 'no route', { n: 5, b: true }, Buffer.from('x'));
  const frame = encodeFrame(resp);
  const headerLength = frame.readUInt32BE(4);
  assert.equal(headerLength >>> 24, 0);
  const json = frame.subarray(8, 8 + headerLength).toString();
  assert.equal(
    json,
    `{"code":17,"extFields":{"n":"5","b":"true"},"flag":1,"language":"JAVA","opaque":${req.opaque},` +
      `"remark":"no route","serializeTypeCurrentRPC":"JSON","version":401}`,
  );
  assert.equal(frame.readInt32BE(0), frame.length - 4);
  assert.equal(frame.subarray(8 + headerLength).toString(), 'x');
});

test('our response frame parses with the ali-ons/tcp-base framing and decoder', () => {
  const RemotingCommand = require('ali-ons/lib/protocol/command/remoting_command.js');
  const [req] = decodeAll([ALI_ONS_GET_ROUTE_FRAME]);
  const resp = createResponseCommand(req!, 0, null, { queueOffset: 12 }, Buffer.from('{"a":1}'));
  const frame = encodeFrame(resp);
  // tcp-base reads a 4-byte header, takes readInt32BE(0) as the body length (Channel.getBodyLength)
  const bodyLength = frame.readInt32BE(0);
  assert.equal(bodyLength, frame.length - 4);
  // ...and ali-ons decodes header+body with the whole 32-bit word as the header length.
  const parsed = RemotingCommand.decode(frame);
  assert.equal(frame.readInt32BE(4), frame.readUInt32BE(4) & 0xffffff, 'high byte must be 0 for ali-ons');
  assert.equal(parsed.opaque, 1);
  assert.equal(parsed.code, 0);
  assert.equal(parsed.isResponseType, true);
  assert.equal(Number(parsed.extFields.queueOffset), 12);
  assert.equal(parsed.body.toString(), '{"a":1}');
});

test('ROCKETMQ binary header: hand-built fixture decodes and re-encodes to the same bytes', () => {
  const [cmd] = decodeAll([ROCKETMQ_BINARY_FRAME]);
  assert.deepEqual(cmd, {
    code: 105, language: 'JAVA', version: 401, opaque: 7, flag: 0, remark: 'hi',
    extFields: { topic: 'T1' }, serializeTypeCurrentRPC: 1, body: Buffer.from('abc'),
  });
  assert.deepEqual(encodeFrame(cmd!), ROCKETMQ_BINARY_FRAME);
});

test('ROCKETMQ binary round trip with null remark/extFields, unicode and other languages', () => {
  const cmd: RemotingCommand = {
    code: 310, language: 'NODE_JS', version: 401, opaque: 123456, flag: 3, remark: null,
    extFields: null, body: null, serializeTypeCurrentRPC: 1,
  };
  const [back] = decodeAll([encodeFrame(cmd)]);
  assert.deepEqual(back, cmd);
  const cmd2: RemotingCommand = { ...cmd, remark: 'héllo ✓', extFields: { 'ключ': 'значение', n: '1' } };
  const [back2] = decodeAll([encodeFrame(cmd2)]);
  assert.deepEqual(back2, cmd2);
});

test('a response is encoded in its request\'s serialize type', () => {
  const [req] = decodeAll([ROCKETMQ_BINARY_FRAME]);
  const resp = createResponseCommand(req!, 0, 'ok');
  const frame = encodeFrame(resp);
  assert.equal(frame.readUInt32BE(4) >>> 24, 1);
  const [back] = decodeAll([frame]);
  assert.equal(back!.remark, 'ok');
  assert.equal(back!.opaque, 7);
  assert.equal(back!.flag, 1);
});

test('JSON header: serializeTypeCurrentRPC may be present; numeric strings accepted', () => {
  const header = Buffer.from('{"code":"34","flag":0,"language":"JAVA","opaque":9,"serializeTypeCurrentRPC":"JSON","version":401,"extFields":{"x":null,"o":{"k":1}}}');
  const cmd = decodeFrameBody(Buffer.concat([Buffer.from([0, 0, 0, header.length]), header]));
  assert.equal(cmd.code, 34);
  assert.deepEqual(cmd.extFields, { o: '{"k":1}' });
  assert.equal(cmd.body, null);
});

function expectFrameError(bytes: Buffer, pattern: RegExp, maxFrameBytes?: number): void {
  const d = new FrameDecoder(() => assert.fail('no command expected'), { maxFrameBytes });
  assert.throws(() => d.push(bytes), (e: unknown) => e instanceof FrameError && pattern.test(e.message));
  // the decoder stays failed
  assert.throws(() => d.push(ALI_ONS_GET_ROUTE_FRAME), FrameError);
}

test('garbage gives clear FrameErrors', () => {
  expectFrameError(frameOfLength(-1, 0), /invalid frame length -1/);
  expectFrameError(frameOfLength(3, 0), /invalid frame length 3/);
  expectFrameError(frameOfLength(DEFAULT_MAX_FRAME_BYTES, 0), /exceeds the limit of 16777216/);
  expectFrameError(frameOfLength(100, 0), /exceeds the limit of 64/, 64);
  expectFrameError(frameOfLength(8, 10, Buffer.alloc(4)), /header length 10 exceeds frame/);
  expectFrameError(frameOfLength(7, 3, Buffer.from('{x}')), /invalid JSON header/);
  expectFrameError(frameOfLength(6, 2, Buffer.from('[]')), /not an object/);
  expectFrameError(frameOfLength(6, 2, Buffer.from('{}')), /missing code/);
  expectFrameError(frameOfLength(6, (2 << 24) | 2, Buffer.from('{}')), /unknown serialize type 2/);
  expectFrameError(frameOfLength(6, (1 << 24) | 2, Buffer.from('{}')), /binary header truncated/);
  // 'GET / HTTP/1.1' sent to the port: 0x47455420 is > 16 MiB
  expectFrameError(Buffer.from('GET / HTTP/1.1\r\n\r\n'), /exceeds the limit/);
});

test('a frame exactly at the limit is accepted', () => {
  const cmd = createRequestCommand(11, null, null);
  const headerBytes = encodeFrame(cmd).length - 8;
  const limit = 8 + headerBytes + 100;
  cmd.body = Buffer.alloc(100, 1);
  assert.equal(decodeAll([encodeFrame(cmd)], limit).length, 1);
  cmd.body = Buffer.alloc(101, 1);
  assert.throws(() => decodeAll([encodeFrame(cmd)], limit), FrameError);
});

test('a large body split in many chunks is assembled once', () => {
  const body = Buffer.alloc(3 * 1024 * 1024, 7);
  const frame = encodeFrame(createRequestCommand(310, { a: 'x' }, body));
  const chunks: Buffer[] = [];
  for (let p = 0; p < frame.length; p += 65536) chunks.push(frame.subarray(p, p + 65536));
  const [cmd] = decodeAll(chunks);
  assert.equal(cmd!.body!.length, body.length);
  assert.ok(cmd!.body!.equals(body));
});
