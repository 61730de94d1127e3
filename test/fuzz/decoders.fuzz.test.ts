/**
 * Property-based fuzzing (fast-check) of every decoder that reads peer bytes: the remoting frame
 * codec (streaming and whole frames), JSON and ROCKETMQ binary headers, the batch body, message
 * properties, SQL92 selectors, pop receipt handles and extraInfo, the header field readers and the
 * typed request header decoders, and the topic/group name validators.
 *
 * Each property takes valid inputs, mutates them (lying lengths, 2 GB length fields, truncation,
 * inserted bytes, invalid UTF-8) or replaces them by random ones, and asserts that the decoder
 * either returns a well-formed value or throws its own error type with a message: never a
 * TypeError/RangeError/stack overflow, and never holds more bytes than it was given.
 *
 * FUZZ_RUNS (default 100000) cases per decoder; the seed is printed. Longer run: `npm run fuzz:long`.
 * Replay: `TSMQ_FUZZ_SEED=<seed> npm run fuzz`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FUZZ_RUNS, FUZZ_SEED, expectOnly, fuzzParams, mutatedArb, nastyStringArb } from './fuzz-config.js';
import type { ExtFieldValue, RemotingCommand } from '../../src/remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../src/remoting/protocol/commands.js';
import { decodeFrameBody, encodeFrame, FrameDecoder, FrameError } from '../../src/remoting/protocol/frame-codec.js';
import { decodeJsonHeader } from '../../src/remoting/protocol/json-header.js';
import { decodeBinaryHeader, encodeBinaryHeader } from '../../src/remoting/protocol/binary-header.js';
import { BatchDecodeError, decodeBatchBody, encodeBatchBody } from '../../src/common/message/batch-codec.js';
import { decodeProperties, encodeProperties } from '../../src/common/message/properties.js';
import { compileSelector, Sql92EvalError, Sql92SyntaxError } from '../../src/broker/filter/sql92/index.js';
import { decodeReceiptHandle, encodeReceiptHandle, ReceiptHandleError } from '../../src/broker/pop/receipt-handle.js';
import { ExtraInfoError, buildExtraInfo, parseExtraInfo } from '../../src/broker/pop/extra-info.js';
import { HeaderError, getBoolean, getInt, getLong, getOptionalString } from '../../src/remoting/headers/header-fields.js';
import { decodeSendMessageHeader } from '../../src/broker/processors/send-message-header.js';
import { decodePullMessageHeader } from '../../src/broker/processors/pull-message-processor.js';
import { decodePopMessageHeader } from '../../src/broker/processors/pop-message-processor.js';
import { validateGroup, validateTopic } from '../../src/common/message/topic-validator.js';
import { RequestCode } from '../../src/remoting/codes/request-code.js';

console.log(`decoder fuzz: seed=${FUZZ_SEED} runs=${FUZZ_RUNS} per decoder (replay: TSMQ_FUZZ_SEED=${FUZZ_SEED} npm run fuzz)`);

// ---------- generators of valid inputs ----------

const extValueArb: fc.Arbitrary<ExtFieldValue> = fc.oneof(nastyStringArb, fc.integer(), fc.boolean());
const extFieldsArb = fc.option(fc.dictionary(fc.string({ maxLength: 12 }), extValueArb, { maxKeys: 6 }), { nil: null });

const commandArb: fc.Arbitrary<RemotingCommand> = fc.record({
  code: fc.integer({ min: -0x8000, max: 0x7fff }),
  language: fc.constantFrom('JAVA', 'CPP', 'GO', 'NODE_JS', 'RUST'),
  version: fc.integer({ min: -0x8000, max: 0x7fff }),
  opaque: fc.integer(),
  flag: fc.integer({ min: 0, max: 3 }),
  remark: fc.option(nastyStringArb, { nil: null }),
  extFields: extFieldsArb,
  body: fc.option(fc.uint8Array({ maxLength: 64 }).map((u) => Buffer.from(u)), { nil: null }),
  serializeTypeCurrentRPC: fc.constantFrom(0 as const, 1 as const),
});

const framesArb: fc.Arbitrary<Buffer> = fc.array(commandArb, { minLength: 1, maxLength: 3 }).map((cs) => Buffer.concat(cs.map(encodeFrame)));

/** Checks the shape every decoded command must have, and that the broker can answer it. */
function assertWellFormed(cmd: RemotingCommand): void {
  assert.ok(Number.isInteger(cmd.code) && Number.isInteger(cmd.opaque) && Number.isInteger(cmd.flag) && Number.isInteger(cmd.version));
  assert.equal(typeof cmd.language, 'string');
  assert.ok(cmd.remark === null || typeof cmd.remark === 'string');
  if (cmd.extFields) {
    for (const v of Object.values(cmd.extFields)) assert.ok(['string', 'number', 'boolean'].includes(typeof v), `extFields value of type ${typeof v}`);
  }
  // what ProcessorTable does on any failure: a SYSTEM_ERROR reply in the request's serialize type
  encodeFrame(createResponseCommand(cmd, 1, 'x'));
}

// ---------- frame codec ----------

test(`frame stream decoder: mutated and random byte streams in random chunks (${FUZZ_RUNS} cases)`, () => {
  const maxFrameBytes = 4096;
  fc.assert(
    fc.property(mutatedArb(framesArb), fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 8 }), (bytes, cuts) => {
      const decoded: RemotingCommand[] = [];
      const d = new FrameDecoder((c) => decoded.push(c), { maxFrameBytes });
      let pushed = 0;
      let p = 0;
      let i = 0;
      let failed: Error | null = null;
      while (p < bytes.length && !failed) {
        const n = i < cuts.length ? cuts[i++]! : bytes.length - p;
        const chunk = bytes.subarray(p, p + n);
        p += chunk.length;
        pushed += chunk.length;
        failed = expectOnly([FrameError], () => d.push(chunk));
        // memory: never more than was received, never a whole frame's worth beyond the limit
        assert.ok(d.bufferedBytes <= pushed && d.bufferedBytes < maxFrameBytes, `buffered ${d.bufferedBytes} of ${pushed}`);
      }
      if (failed) {
        assert.equal(d.bufferedBytes, 0, 'a failed decoder holds nothing');
        assert.throws(() => d.push(Buffer.from([0, 0, 0, 8])), FrameError, 'a failed decoder stays failed');
      }
      for (const c of decoded) assertWellFormed(c);
    }),
    fuzzParams(),
  );
});

test(`whole frame body (decodeFrameBody): mutated JSON and binary frames (${FUZZ_RUNS} cases)`, () => {
  fc.assert(
    fc.property(mutatedArb(commandArb.map((c) => encodeFrame(c).subarray(4))), (bytes) => {
      let cmd: RemotingCommand | undefined;
      expectOnly([FrameError], () => (cmd = decodeFrameBody(bytes)));
      if (cmd) assertWellFormed(cmd);
    }),
    fuzzParams(),
  );
});

test(`valid frames decode to what was encoded (${FUZZ_RUNS / 10} cases)`, () => {
  fc.assert(
    fc.property(commandArb, (c) => {
      const decoded = decodeFrameBody(encodeFrame(c).subarray(4));
      assert.equal(decoded.code, c.code);
      assert.equal(decoded.opaque, c.opaque);
      assert.equal(decoded.remark, c.remark === null ? null : decoded.remark);
      assert.equal(decoded.body?.length ?? 0, c.body?.length ?? 0);
    }),
    fuzzParams(FUZZ_RUNS / 10),
  );
});

// ---------- JSON header ----------

const jsonHeaderValueArb = fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 12 }), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }));
const jsonHeaderObjectArb = fc.record(
  { code: jsonHeaderValueArb, opaque: jsonHeaderValueArb, flag: jsonHeaderValueArb, version: jsonHeaderValueArb, language: jsonHeaderValueArb, remark: jsonHeaderValueArb, extFields: jsonHeaderValueArb },
  { requiredKeys: [] },
);

test(`JSON header: objects with wrong types, random JSON, mutated text (${FUZZ_RUNS} cases)`, () => {
  const textArb = fc.oneof(jsonHeaderObjectArb.map((o) => JSON.stringify(o)), fc.json({ maxDepth: 3 }), fc.string({ maxLength: 64 })).map((s) => Buffer.from(s, 'utf8'));
  fc.assert(
    fc.property(mutatedArb(textArb), (bytes) => {
      let h: Omit<RemotingCommand, 'body'> | undefined;
      expectOnly([FrameError], () => (h = decodeJsonHeader(bytes)));
      if (h) assertWellFormed({ ...h, body: null });
    }),
    fuzzParams(),
  );
});

// ---------- ROCKETMQ binary header ----------

test(`ROCKETMQ binary header: mutated headers (lying remark/extFields/key/value lengths) (${FUZZ_RUNS} cases)`, () => {
  const validArb = commandArb.map((c) => encodeBinaryHeader({ ...c, serializeTypeCurrentRPC: 1 }));
  fc.assert(
    fc.property(mutatedArb(validArb), (bytes) => {
      let h: Omit<RemotingCommand, 'body'> | undefined;
      expectOnly([FrameError], () => (h = decodeBinaryHeader(bytes)));
      if (h) {
        assertWellFormed({ ...h, body: null });
        const textBytes = (h.remark?.length ?? 0) + Object.entries(h.extFields ?? {}).reduce((n, [k, v]) => n + k.length + String(v).length, 0);
        assert.ok(textBytes <= bytes.length, 'strings cannot be longer than the header');
      }
    }),
    fuzzParams(),
  );
});

// ---------- batch body and properties ----------

const propertiesArb = fc.array(fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 12 })), { maxLength: 4 }).map((es) => {
  const m = new Map<string, string>();
  for (const [k, v] of es) m.set(k.replace(/[\u0001\u0002]/g, 'x'), v.replace(/[\u0002]/g, 'y'));
  return m;
});

test(`batch body decoder: mutated batches (lying TOTALSIZE, body and properties lengths) (${FUZZ_RUNS} cases)`, () => {
  const batchArb = fc.array(fc.record({ flag: fc.integer(), body: fc.uint8Array({ maxLength: 32 }).map((u) => Buffer.from(u)), properties: propertiesArb }), { minLength: 1, maxLength: 4 }).map(encodeBatchBody);
  fc.assert(
    fc.property(mutatedArb(batchArb), (bytes) => {
      let items: ReturnType<typeof decodeBatchBody> | undefined;
      const err = expectOnly([BatchDecodeError], () => (items = decodeBatchBody(bytes)));
      if (err) assert.match(err.message, /batch item \d+ at byte \d+/);
      if (items) assert.ok(items.reduce((n, it) => n + it.body.length + 22, 0) <= bytes.length);
    }),
    fuzzParams(),
  );
});

test(`properties text: never throws, valid maps round-trip (${FUZZ_RUNS} cases)`, () => {
  fc.assert(
    fc.property(fc.oneof(propertiesArb.map((m) => ({ m, text: encodeProperties(m) })), nastyStringArb.map((text) => ({ m: null, text }))), ({ m, text }) => {
      const decoded = expectOnly([], () => decodeProperties(text));
      assert.equal(decoded, null);
      const map = decodeProperties(text);
      if (m) {
        // RocketMQ drops entries whose key+value is shorter than 2 chars ('k\x01' with an empty value)
        for (const [k, v] of m) if (v.length > 0) assert.equal(map.get(k), v);
      }
    }),
    fuzzParams(),
  );
});

// ---------- SQL92 ----------

test(`SQL92 selector: random and mutated selectors compile or give Sql92SyntaxError; evaluation gives Sql92EvalError at worst (${FUZZ_RUNS} cases)`, () => {
  const token = fc.constantFrom('a', 'b', 'TAGS', '=', '<>', '>', '<=', 'AND', 'OR', 'NOT', '(', ')', 'IS', 'NULL', 'BETWEEN', 'IN', 'LIKE', 'ESCAPE', 'CONTAINS', 'STARTSWITH', "'x'", "'", '1', '-9223372036854775808', '9223372036854775808', '1.5e309', 'TRUE', ',', '+', '-', '*', '/', '%', '\u0000', 'é');
  const selectorArb = fc.oneof(fc.array(token, { maxLength: 16 }).map((t) => t.join(' ')), nastyStringArb, fc.string({ maxLength: 40 }));
  const props = new Map([['a', '1'], ['b', 'x'], ['TAGS', 'TagA']]);
  fc.assert(
    fc.property(selectorArb, (sql) => {
      let sel: ReturnType<typeof compileSelector> | undefined;
      expectOnly([Sql92SyntaxError], () => (sel = compileSelector(sql)));
      if (sel) {
        expectOnly([Sql92EvalError], () => sel!.evaluate(props));
        assert.equal(typeof sel.matches(props), 'boolean');
      }
    }),
    fuzzParams(),
  );
});

test('SQL92: a selector nested 100000 levels deep is a syntax error, not a stack overflow', () => {
  const deep = '('.repeat(100_000) + 'a = 1' + ')'.repeat(100_000);
  assert.throws(() => compileSelector(deep), Sql92SyntaxError);
  const chain = Array.from({ length: 50_000 }, () => 'a = 1').join(' AND ');
  assert.throws(() => compileSelector(chain), Sql92SyntaxError);
});

// ---------- pop receipt handles and extraInfo ----------

const handleArb = fc.record({
  brokerName: nastyStringArb,
  topic: nastyStringArb.filter((s) => s.length > 0),
  queueId: fc.nat(),
  queueOffset: fc.maxSafeNat(),
  commitLogOffset: fc.maxSafeNat(),
  version: fc.integer({ min: 1 }),
  invisibleUntilMs: fc.maxSafeNat(),
  attempt: fc.integer({ min: 1, max: 100 }),
});

test(`receipt handle: mutated handles give ReceiptHandleError, valid ones round-trip (${FUZZ_RUNS} cases)`, () => {
  fc.assert(
    fc.property(fc.oneof(handleArb.map(encodeReceiptHandle).map((t) => Buffer.from(t, 'latin1')).chain((b) => mutatedArb(fc.constant(b), 64)).map((b) => b.toString('latin1')), nastyStringArb, fc.string({ maxLength: 5000 }).map((s) => '1' + s)), (text) => {
      expectOnly([ReceiptHandleError], () => decodeReceiptHandle(text));
    }),
    fuzzParams(),
  );
  fc.assert(fc.property(handleArb, (h) => assert.deepEqual(decodeReceiptHandle(encodeReceiptHandle(h)), { ...h })), fuzzParams(FUZZ_RUNS / 10));
});

test(`pop extraInfo: mutated texts give ExtraInfoError, valid ones round-trip (${FUZZ_RUNS} cases)`, () => {
  const infoArb = fc.record({ ckQueueOffset: fc.maxSafeNat(), popTimeMs: fc.maxSafeNat(), invisibleTimeMs: fc.maxSafeNat(), reviveQid: fc.integer(), brokerName: fc.stringMatching(/^[a-z0-9-]{1,8}$/), queueId: fc.nat(), msgQueueOffset: fc.maxSafeNat() });
  fc.assert(
    fc.property(fc.oneof(infoArb.map(buildExtraInfo).map((t) => Buffer.from(t)).chain((b) => mutatedArb(fc.constant(b), 64)).map((b) => b.toString('utf8')), nastyStringArb), (text) => {
      expectOnly([ExtraInfoError], () => parseExtraInfo(text));
    }),
    fuzzParams(),
  );
});

// ---------- header field readers and typed request headers ----------

const fieldValueArb: fc.Arbitrary<ExtFieldValue> = fc.oneof(fc.integer(), fc.double(), fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String), fc.boolean(), nastyStringArb, fc.constantFrom(' 12 ', '+1', '1.0', '', '-0', '007', 'TRUE', ' false'));

test(`header field readers: every value gives a value in range or HeaderError (${FUZZ_RUNS} cases)`, () => {
  fc.assert(
    fc.property(fc.option(fieldValueArb, { nil: undefined }), (v) => {
      const ext: Record<string, ExtFieldValue> = v === undefined ? {} : { f: v };
      let n: number | undefined;
      expectOnly([HeaderError], () => (n = getInt(ext, 'f')));
      if (n !== undefined) assert.ok(Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31);
      n = undefined;
      expectOnly([HeaderError], () => (n = getLong(ext, 'f')));
      if (n !== undefined) assert.ok(Number.isSafeInteger(n));
      let b: boolean | undefined;
      expectOnly([HeaderError], () => (b = getBoolean(ext, 'f')));
      if (b !== undefined) assert.equal(typeof b, 'boolean');
      const s = getOptionalString(ext, 'f');
      assert.ok(s === undefined || typeof s === 'string');
    }),
    fuzzParams(),
  );
});

const SEND_KEYS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'producerGroup', 'topic', 'queueId', 'sysFlag', 'bornTimestamp', 'flag'];
const PULL_POP_KEYS = ['consumerGroup', 'topic', 'queueId', 'queueOffset', 'maxMsgNums', 'sysFlag', 'commitOffset', 'suspendTimeoutMillis', 'subVersion', 'invisibleTime', 'pollTime', 'bornTime', 'initMode', 'expType', 'exp', 'order', 'subscription', 'expressionType'];

function headerArb(keys: string[]): fc.Arbitrary<Record<string, ExtFieldValue>> {
  return fc.array(fc.tuple(fc.constantFrom(...keys, '__proto__', 'constructor', 'toString'), fieldValueArb), { maxLength: keys.length + 2 }).map((es) => {
    const o: Record<string, ExtFieldValue> = {};
    for (const [k, v] of es) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
    return o;
  });
}

test(`typed request headers (SEND_MESSAGE v1/v2, PULL_MESSAGE, POP_MESSAGE): HeaderError or a well-typed header (${FUZZ_RUNS} cases)`, () => {
  const base = { language: 'JAVA', version: 0, opaque: 1, flag: 0, remark: null, body: null, serializeTypeCurrentRPC: 0 as const };
  fc.assert(
    fc.property(headerArb([...SEND_KEYS, ...PULL_POP_KEYS]), fc.constantFrom(RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.PULL_MESSAGE, RequestCode.POP_MESSAGE), (ext, code) => {
      const request: RemotingCommand = { ...base, code, extFields: ext };
      const decode = code === RequestCode.PULL_MESSAGE ? decodePullMessageHeader : code === RequestCode.POP_MESSAGE ? decodePopMessageHeader : decodeSendMessageHeader;
      let h: object | undefined;
      expectOnly([HeaderError], () => (h = decode(request)));
      if (h) {
        for (const [k, v] of Object.entries(h)) {
          if (typeof v === 'number') assert.ok(Number.isSafeInteger(v), `${k}=${v}`);
        }
      }
    }),
    fuzzParams(),
  );
});

// ---------- names that reach the file system ----------

test(`topic and group names: an accepted name never holds '/', '..', NUL or more than the limit (${FUZZ_RUNS} cases)`, () => {
  fc.assert(
    fc.property(fc.oneof(nastyStringArb, fc.string({ unit: fc.constantFrom('a', '.', '/', '\\', '\u0000', '%', '|', '_', '-'), maxLength: 300 })), (name) => {
      for (const [verdict, limit] of [[validateTopic(name), name.startsWith('%RETRY%') ? 255 : 127], [validateGroup(name), 120]] as const) {
        if (verdict === null) {
          assert.match(name, /^[%|a-zA-Z0-9_-]+$/);
          assert.ok(!name.includes('/') && !name.includes('..') && !name.includes('\u0000'));
          assert.ok(name.length <= limit);
        } else {
          assert.equal(typeof verdict, 'string');
        }
      }
    }),
    fuzzParams(),
  );
});

test('a 2 GB length field allocates nothing before the bytes arrive (limit raised to 2 GB)', () => {
  const d = new FrameDecoder(() => assert.fail('nothing is complete'), { maxFrameBytes: 0x7fffffff });
  const before = process.memoryUsage().arrayBuffers;
  const head = Buffer.alloc(8 + 1024);
  head.writeInt32BE(0x7fffffff - 4, 0);
  head.writeUInt32BE(16, 4);
  d.push(head);
  for (let i = 0; i < 64; i++) d.push(Buffer.alloc(1024, i));
  assert.equal(d.bufferedBytes, 1024 * 65 + 4, 'holds exactly what arrived, the length field consumed');
  const grownBytes = process.memoryUsage().arrayBuffers - before;
  assert.ok(grownBytes < 8 * 1024 * 1024, `array buffers grew by ${grownBytes} bytes`);
  d.release();
  assert.equal(d.bufferedBytes, 0);
});

test('a 2 GB length field with the default 16 MiB limit fails at once, holding nothing', () => {
  const d = new FrameDecoder(() => assert.fail('nothing is complete'));
  const b = Buffer.alloc(8);
  b.writeInt32BE(0x7fffffff, 0);
  assert.throws(() => d.push(b), (e: Error) => e instanceof FrameError && /exceeds the limit of 16777216/.test(e.message));
  assert.equal(d.bufferedBytes, 0);
  const neg = new FrameDecoder(() => assert.fail('nothing is complete'));
  b.writeInt32BE(-0x80000000, 0);
  assert.throws(() => neg.push(b), (e: Error) => e instanceof FrameError && /invalid frame length -2147483648/.test(e.message));
});
