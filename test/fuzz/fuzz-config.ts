/**
 * Settings shared by the fuzz suites (not a test file).
 *
 *   TSMQ_FUZZ_SEED   seed of every property run (default: random; printed either way, so a failing
 *                    CI run is replayed with `TSMQ_FUZZ_SEED=<seed> npm run fuzz`)
 *   TSMQ_FUZZ_RUNS   cases per decoder (default 100000; `npm run fuzz:long` uses 2000000)
 *
 * fast-check shrinks a failing case and reports it with its `path`; the seed alone replays it.
 */
import fc from 'fast-check';

export const FUZZ_SEED = process.env.TSMQ_FUZZ_SEED ? Number(process.env.TSMQ_FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
export const FUZZ_RUNS = process.env.TSMQ_FUZZ_RUNS ? Number(process.env.TSMQ_FUZZ_RUNS) : 100_000;

if (!Number.isSafeInteger(FUZZ_SEED) || !(FUZZ_RUNS > 0)) {
  throw new Error(`bad TSMQ_FUZZ_SEED/TSMQ_FUZZ_RUNS: ${process.env.TSMQ_FUZZ_SEED}/${process.env.TSMQ_FUZZ_RUNS}`);
}

/** fast-check parameters for one decoder: the shared seed, `runs` cases (default FUZZ_RUNS). */
export function fuzzParams(runs = FUZZ_RUNS): fc.Parameters<unknown> {
  return { seed: FUZZ_SEED, numRuns: runs, endOnFailure: false };
}

/**
 * Calls `f`; returns the error it threw. Fails (throws) when the error is not an instance of one of
 * `allowed`: anything else (TypeError, RangeError, a stack overflow) is a decoder crash.
 */
export function expectOnly(allowed: ReadonlyArray<abstract new (...args: never[]) => Error>, f: () => unknown): Error | null {
  try {
    f();
    return null;
  } catch (e) {
    if (allowed.some((c) => e instanceof c)) {
      const err = e as Error;
      if (typeof err.message !== 'string' || err.message.length === 0) throw new Error(`decoder error without a message: ${String(e)}`);
      return err;
    }
    throw new Error(`decoder crashed with ${(e as Error)?.name ?? typeof e}: ${(e as Error)?.message ?? String(e)}`, { cause: e });
  }
}

/** Interesting int32 values for length fields: lying, negative, 2 GB, around common sizes. */
export const LYING_INT32S = [0, 1, 3, 4, 7, 8, 16, 17, 255, 0x7fff, 0x8000, 0xffff, 0x10000, 0xffffff, 0x1000000, 16 * 1024 * 1024 - 4, 16 * 1024 * 1024, 0x7ffffff0, 0x7fffffff, -1, -2, -0x80000000];

/** Byte sequences that are not valid UTF-8 (overlong, lone continuation, surrogate, truncated, 0xFF). */
export const INVALID_UTF8 = [[0xff], [0xc0, 0x80], [0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80], [0xfe, 0xfe]].map((b) => Buffer.from(b));

/** One mutation applied to an encoded input. */
export type Mutation =
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'int32'; at: number; value: number }
  | { kind: 'int16'; at: number; value: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'utf8'; at: number; which: number };

/** Mutations at relative positions in [0, 1) of the input, so they apply to inputs of any size. */
export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('int32' as const), at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), value: fc.oneof(fc.constantFrom(...LYING_INT32S), fc.integer({ min: -0x80000000, max: 0x7fffffff })) }),
  fc.record({ kind: fc.constant('int16' as const), at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), value: fc.constantFrom(0, 1, 0x7fff, -1, -0x8000, 5, 200) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant('utf8' as const), at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), which: fc.integer({ min: 0, max: INVALID_UTF8.length - 1 }) }),
);

/** A copy of `input` with `mutations` applied in order. */
export function mutate(input: Buffer, mutations: readonly Mutation[]): Buffer {
  let b = Buffer.from(input);
  for (const m of mutations) {
    const at = Math.floor(m.at * (b.length + 1));
    switch (m.kind) {
      case 'flip':
        if (at < b.length) b[at]! ^= 1 << m.bit;
        break;
      case 'int32':
        if (at + 4 <= b.length) b.writeInt32BE(m.value, at);
        break;
      case 'int16':
        if (at + 2 <= b.length) b.writeInt16BE(m.value, at);
        break;
      case 'truncate':
        b = b.subarray(0, at);
        break;
      case 'insert':
        b = Buffer.concat([b.subarray(0, at), m.bytes, b.subarray(at)]);
        break;
      case 'utf8':
        b = Buffer.concat([b.subarray(0, at), INVALID_UTF8[m.which]!, b.subarray(at)]);
        break;
    }
  }
  return b;
}

/** `input` unchanged, or mutated 1..4 times, or replaced by random bytes. */
export function mutatedArb(valid: fc.Arbitrary<Buffer>, maxRandomBytes = 256): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { weight: 1, arbitrary: valid },
    { weight: 6, arbitrary: fc.tuple(valid, fc.array(mutationArb, { minLength: 1, maxLength: 4 })).map(([b, ms]) => mutate(b, ms)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: maxRandomBytes }).map((u) => Buffer.from(u)) },
  );
}

/** Short text mixing ASCII, separators used by RocketMQ formats, controls, NUL and astral chars. */
export const nastyStringArb: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: fc.constantFrom('a', '1', '-', '%', '|', '/', '.', '..', '\u0000', '\u0001', '\u0002', ' ', '\ud800', '\udfff', '\u{1f600}', '"', '\\', 'é', ',', '\n'), maxLength: 24 }),
  fc.constantFrom('', ' ', '..', '../x', '/etc/passwd', 'a\u0000b', 'x'.repeat(128), 'x'.repeat(256), '-1', '2147483648', '9007199254740993', '1e3', '0x10', 'NaN', 'true'),
);
