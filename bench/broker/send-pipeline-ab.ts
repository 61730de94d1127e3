/**
 * A/B of the broker's single-send protocol path from two source trees, in one process (no
 * sockets, no store, no load generator): SEND_MESSAGE_V2 (310) frames exactly as Apache's Java
 * client writes them (fastjson JSON header, all extFields values strings, UNIQ_KEY / WAIT / KEYS /
 * TAGS properties, `--size` B body), 64 per read, through each tree's FrameDecoder →
 * ProcessorTable.dispatch → the broker's own 310 handler (static-topic wrapper,
 * SendMessageProcessor, BrokerContext.putMessage, from an in-process broker: the unit tests'
 * BrokerHarness) → a put that only counts (answers PUT_OK like an ASYNC_FLUSH put: the turn's puts
 * after one shared "commit" microtask, through the store API the tree's broker calls: a promise
 * per put, or putMessageWithCallback) → FrameBatch encoding of the 64 replies.
 * What it measures is the part of a single send's broker CPU that src/remoting and the send
 * processor own (decode, header, checks, reply, encode), without the CommitLog, dispatch, socket
 * and the noise of a shared machine's network load; sides alternate A B, B A, … per round.
 *
 * Usage: npx tsx bench/broker/send-pipeline-ab.ts --a <root> --b <root> [--rounds 8] [--messages 100000]
 *        [--size 1024] [--label-a before] [--label-b after]
 * Output: one `PIPE {json}` line per side and round (process CPU µs per send), then the medians.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseRootAbArgs, type RootAbOpts } from '../lib/ab-child.js';

type Opts = RootAbOpts;

const PER_READ = 64;
const QUEUES = 8;

interface Rig { round(): Promise<void>; close(): Promise<void> }

/** A Java-form SEND_MESSAGE_V2 frame (fastjson key order, string values). */
function javaSendFrame(i: number, body: Buffer): Buffer {
  const props = `UNIQ_KEY\u0001${(0x7f000001_00000000n + BigInt(i)).toString(16).toUpperCase().padStart(32, '0')}\u0002WAIT\u0001true\u0002KEYS\u0001order-${i} user-${i % 1000}\u0002TAGS\u0001TagA\u0002`;
  const ext = { a: 'PID_PIPE', b: 'PipeTopic', c: 'TBW102', d: String(QUEUES), e: String(i % QUEUES), f: '0', g: String(1_764_640_000_000 + i), h: '0', i: props, j: '0', k: 'false', m: 'false', n: 'broker-a' };
  const header = Buffer.from(`{"code":310,"extFields":${JSON.stringify(ext)},"flag":0,"language":"JAVA","opaque":${i + 1},"serializeTypeCurrentRPC":"JSON","version":453}`);
  const f = Buffer.alloc(8 + header.length + body.length);
  f.writeInt32BE(4 + header.length + body.length, 0);
  f.writeInt32BE(header.length, 4);
  header.copy(f, 8);
  body.copy(f, 8 + header.length);
  return f;
}

async function rigOf(root: string, size: number): Promise<Rig> {
  const url = (p: string): string => pathToFileURL(resolve(root, p)).href;
  const { BrokerHarness } = await import(url('test/unit/broker/support/broker-harness.ts'));
  const { FakeMessageStore } = await import(url('test/unit/broker/support/fake-message-store.ts'));
  const { ManualClock } = await import(url('src/common/time/clock.ts'));
  const { silentLogger } = await import(url('src/common/logging/logger.ts'));
  const { FrameDecoder } = await import(url('src/remoting/protocol/frame-codec.ts'));
  const { FrameBatch } = await import(url('src/remoting/protocol/frame-batch.ts'));
  const { ProcessorTable } = await import(url('src/remoting/transport/processor-table.ts'));
  /**
   * Counts puts and answers PUT_OK (nothing is stored), the way the real store answers an
   * ASYNC_FLUSH put: the puts of a turn wait for one commit, then each is answered — a promise
   * put by resolving its promise, a putMessageWithCallback put by its callback (a tree whose
   * broker does not call putMessageWithCallback uses putMessage only).
   */
  class CountingStore extends FakeMessageStore {
    private n = 0;
    private readonly waiting: { done: (r: unknown, arg: unknown) => void; arg: unknown; result: unknown }[] = [];
    private scheduled = false;
    private readonly commit = (): void => {
      this.scheduled = false;
      const w = this.waiting.splice(0);
      for (const x of w) x.done(x.result, x.arg);
    };
    private resultOf(): unknown {
      const q = this.n++;
      return { status: 'PUT_OK', appendResult: { wroteOffset: q * 1200, wroteBytes: 1200, msgId: `7F00000100002A9F${String(1e15 + q * 1200)}`, queueOffset: q, storeTimestamp: 0 } };
    }
    private wait(done: (r: unknown, arg: unknown) => void, arg: unknown): void {
      this.waiting.push({ done, arg, result: this.resultOf() });
      if (!this.scheduled) {
        this.scheduled = true;
        queueMicrotask(this.commit);
      }
    }
    putMessage(): Promise<unknown> {
      return new Promise((resolve) => this.wait((r) => resolve(r), null));
    }
    putMessageWithCallback(msg: unknown, done: (r: unknown, m: unknown) => void): void {
      this.wait(done, msg);
    }
  }
  const clock = new ManualClock(1_700_000_000_000);
  const harness = await BrokerHarness.create({ store: new (CountingStore as unknown as new (c: unknown) => object)(clock), clock });
  const table = new ProcessorTable(silentLogger);
  table.register(310, harness.broker.handlerFor(310));
  const batch = new FrameBatch();
  let replies = 0;
  let wake: (() => void) | null = null;
  const channel = {
    id: 'pipe', remoteAddress: '127.0.0.1:40000', closed: false, close(): void {}, onClose(): void {},
    send(cmd: { code: number; remark: string | null }): void {
      if (cmd.code !== 0) throw new Error(`send answered ${cmd.code}: ${cmd.remark}`);
      batch.add(cmd);
      if (++replies % PER_READ === 0) {
        batch.take();
        const w = wake;
        wake = null;
        w?.();
      }
    },
  };
  const decoder = new FrameDecoder((cmd: unknown) => void table.dispatch(channel, cmd));
  const body = Buffer.alloc(size, 7);
  const read = Buffer.concat(Array.from({ length: PER_READ }, (_, i) => javaSendFrame(i, body)));
  const round = (): Promise<void> => new Promise<void>((done) => {
    wake = done;
    decoder.push(read);
  });
  for (let i = 0; i < 50; i++) await round(); // the topic is created by the first send; warm up
  return { round, close: () => harness.close() };
}

async function main(): Promise<void> {
  const o = parseRootAbArgs(process.argv.slice(2), { rounds: 8, messages: 100_000 });
  const sides = [{ label: o.labelA, rig: await rigOf(o.a, o.size) }, { label: o.labelB, rig: await rigOf(o.b, o.size) }];
  const results = new Map<string, number[]>(sides.map((s) => [s.label, []]));
  const reads = Math.ceil(o.messages / PER_READ);
  for (let round = 1; round <= o.rounds; round++) {
    for (const s of round % 2 === 1 ? sides : [...sides].reverse()) {
      const t0 = process.cpuUsage();
      for (let i = 0; i < reads; i++) await s.rig.round();
      const u = process.cpuUsage(t0);
      const us = (u.user + u.system) / (reads * PER_READ);
      results.get(s.label)!.push(us);
      console.log(`PIPE ${JSON.stringify({ side: s.label, round, cpuUsPerSend: Number(us.toFixed(3)) })}`);
    }
  }
  const median = (a: number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1]!;
  const ma = median(results.get(o.labelA)!);
  const mb = median(results.get(o.labelB)!);
  console.log(`\n| side | CPU µs per send (median of ${o.rounds}) | min |\n|---|---|---|`);
  for (const s of sides) console.log(`| ${s.label} | ${median(results.get(s.label)!).toFixed(3)} | ${Math.min(...results.get(s.label)!).toFixed(3)} |`);
  console.log(`${o.labelB} / ${o.labelA}: ${(mb / ma).toFixed(3)}`);
  for (const s of sides) await s.rig.close();
}

main().then(() => process.exit(0), (e: unknown) => {
  console.error(e);
  process.exit(1);
});
