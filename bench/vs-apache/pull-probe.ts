/**
 * Pull probe: the same raw-frame Node client against Apache RocketMQ and tsmq, to judge the
 * brokers' pull serving from the client side (bench/results/consume-2026-12-02-s8.md).
 *
 *   npx tsx bench/vs-apache/pull-probe.ts [--only apache|tsmq] [--tsmq-root DIR] [--messages N]
 *       [--passes N] [--broker-cpus 0] [--client-cpus 1]
 *
 * Per system: start the broker (bench/vs-apache/peers.ts, the harness's flags), preload N × 1 KiB
 * with the harness's LoadGen JVM (rocketmq-client 4.9.8 async single sends, 8 queues round robin,
 * so the stored records are what the Java consumers read), stop the JVM, then per pass:
 * - `serial`: one PULL_MESSAGE of 32 in flight in all (the broker's unloaded service time);
 * - `fan`: 2 connections (one per "consumer JVM", each its own group) × 8 queues, one pull of 32
 *   in flight per queue, the next pull sent when the reply is complete (the Java push consumer's
 *   pattern without its decode cost).
 * Each pull: PULL_MESSAGE (11), sysFlag = SUSPEND | SUBSCRIPTION (subscription "*" in the request,
 * as the Java client sends it), suspendTimeoutMillis 15000. Measured from the client: round trip
 * (request written → reply's last byte parsed), time to the reply's first byte, reply size, records
 * per reply, socket reads ('data' events) spanning a reply, header bytes, the header's extFields,
 * and one record's properties; broker CPU-s per pass (/proc of its process tree).
 * Last: a long-polling probe: a pull at the queue's end is suspended, one message is sent
 * (SEND_MESSAGE from this client), and the time until the suspended pull's reply is measured.
 */
import type { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { mavenBuild } from './maven.js';
import { startApache, startTsmq, type Running } from './peers.js';
import { GeneratorGroup } from './generators.js';
import { treeCpuSeconds } from './cpu.js';
import { installCleanup } from './procs.js';
import { openSocket, takeFrames } from '../lib/remoting-client.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, '..', '..');
const JAVA_DIR = join(HERE, 'java');
const SERVER_POM_DIR = join(JAVA_DIR, 'apache-server');

interface Frame {
  code: number;
  opaque: number;
  remark?: string;
  extFields: Record<string, string>;
  headerBytes: number;
  body: Buffer;
  chunks: number;
  firstByteNs: bigint;
  doneNs: bigint;
}

let opaqueSeq = 1;

/** Raw remoting connection that records, per reply, when its first byte arrived and how many reads it spanned. */
class ProbeConn {
  private buf: Buffer = Buffer.alloc(0);
  /** reads since the start of the frame at the buffer's head */
  private chunksInFrame = 0;
  private frameStartNs = 0n;
  private readonly pending = new Map<number, (f: Frame) => void>();

  private constructor(private readonly sock: Socket) {
    sock.setNoDelay(true);
    sock.on('data', (d: Buffer) => this.onData(d));
  }

  static async open(addr: string): Promise<ProbeConn> {
    return new ProbeConn(await openSocket(addr));
  }

  invoke(code: number, extFields: Record<string, string>, body?: Buffer): Promise<Frame> {
    const opaque = opaqueSeq++;
    const header = Buffer.from(JSON.stringify({ code, language: 'JAVA', version: 395, opaque, flag: 0, serializeTypeCurrentRPC: 'JSON', extFields }));
    const bl = body?.length ?? 0;
    const head = Buffer.allocUnsafe(8);
    head.writeInt32BE(4 + header.length + bl, 0);
    head.writeInt32BE(header.length, 4);
    const p = new Promise<Frame>((res) => this.pending.set(opaque, res));
    this.sock.write(body ? Buffer.concat([head, header, body]) : Buffer.concat([head, header]));
    return p;
  }

  private onData(d: Buffer): void {
    const now = process.hrtime.bigint();
    if (this.buf.length === 0) this.frameStartNs = now;
    this.chunksInFrame++;
    this.buf = takeFrames(this.buf.length === 0 ? d : Buffer.concat([this.buf, d]), (h, body, headerLen) => {
      const f: Frame = { code: h.code, opaque: h.opaque, remark: h.remark, extFields: (h.extFields ?? {}) as Record<string, string>, headerBytes: headerLen, body, chunks: this.chunksInFrame, firstByteNs: this.frameStartNs, doneNs: now };
      // the next frame starts in this read
      this.chunksInFrame = 1;
      this.frameStartNs = now;
      const w = this.pending.get(h.opaque);
      if (w) {
        this.pending.delete(h.opaque);
        w(f);
      }
    });
    if (this.buf.length === 0) this.chunksInFrame = 0;
  }

  close(): void {
    this.sock.destroy();
  }
}

function records(body: Buffer): { n: number; firstOffset: number; properties: string } {
  let n = 0;
  let firstOffset = -1;
  let properties = '';
  for (let p = 0; p + 4 <= body.length; ) {
    const size = body.readInt32BE(p);
    if (size <= 0) break;
    if (n === 0) {
      firstOffset = Number(body.readBigInt64BE(p + 20));
      // v1 record: after fixed fields, body len + body, topic len (1 B) + topic, props len (2 B) + props
      const sysFlag = body.readInt32BE(p + 36);
      const bornV6 = (sysFlag & 0x10) !== 0;
      const storeV6 = (sysFlag & 0x20) !== 0;
      let q = p + 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + (bornV6 ? 20 : 8) + 8 + (storeV6 ? 20 : 8) + 4 + 8;
      const bodyLen = body.readInt32BE(q);
      q += 4 + bodyLen;
      const topicLen = body.readUInt8(q);
      q += 1 + topicLen;
      const propsLen = body.readUInt16BE(q);
      properties = body.toString('utf8', q + 2, q + 2 + propsLen).replace(/\u0001/g, '=').replace(/\u0002/g, '; ');
    }
    p += size;
    n++;
  }
  return { n, firstOffset, properties };
}

function pct(a: number[], q: number): number {
  if (a.length === 0) return NaN;
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

const r1 = (x: number): number => Math.round(x * 10) / 10;
const r3 = (x: number): number => Math.round(x * 1000) / 1000;

async function brokerAddrOf(namesrv: string, topic: string): Promise<{ addr: string; queues: number }> {
  const c = await ProbeConn.open(namesrv);
  try {
    const f = await c.invoke(105, { topic });
    console.log(`  route of ${topic}: ${f.body.toString('utf8').slice(0, 600)}`);
    const q = /"?readQueueNums"?\s*:\s*(\d+)/.exec(f.body.toString('utf8'));
    const m = /"?brokerAddrs"?\s*:\s*\{\s*"?0"?\s*:\s*"([^"]+)"/.exec(f.body.toString('utf8'));
    if (!m) throw new Error(`no broker address in the route of ${topic}: code ${f.code} ${f.body.toString('utf8').slice(0, 300)}`);
    return { addr: m[1]!, queues: Number(q?.[1] ?? 8) };
  } finally {
    c.close();
  }
}

interface PassStats {
  mode: string;
  pulls: number;
  msgs: number;
  seconds: number;
  msgsPerSec: number;
  brokerCpuS: number;
  brokerUsPerMsg: number;
  rttUs: { p50: number; p90: number; p99: number; max: number };
  firstByteUs: { p50: number; p99: number };
  transferUs: { p50: number; p99: number };
  recordsPerReply: { min: number; p50: number; mean: number };
  readsPerReply: { p50: number; mean: number; max: number };
  replyBytes: number;
  headerBytes: number;
}

async function pass(mode: 'serial' | 'fan', broker: string, topic: string, queues: number, groupTag: string, cpuRoots: number[]): Promise<PassStats> {
  const conns = mode === 'serial' ? [await ProbeConn.open(broker)] : [await ProbeConn.open(broker), await ProbeConn.open(broker)];
  const rtt: number[] = [];
  const fb: number[] = [];
  const tr: number[] = [];
  const recs: number[] = [];
  const reads: number[] = [];
  let bytes = 0;
  let hdr = 0;
  let msgs = 0;
  const pullOne = async (c: ProbeConn, group: string, q: number, offset: number): Promise<{ n: number; next: number; code: number }> => {
    const t0 = process.hrtime.bigint();
    const f = await c.invoke(11, {
      consumerGroup: group, topic, queueId: String(q), queueOffset: String(offset), maxMsgNums: '32', sysFlag: String(2 | 4), commitOffset: '0',
      suspendTimeoutMillis: '15000', subscription: '*', subVersion: '0', expressionType: 'TAG',
    });
    if (f.code !== 0) return { n: 0, next: offset, code: f.code };
    const r = records(f.body);
    rtt.push(Number(f.doneNs - t0) / 1000);
    fb.push(Number(f.firstByteNs - t0) / 1000);
    tr.push(Number(f.doneNs - f.firstByteNs) / 1000);
    recs.push(r.n);
    reads.push(f.chunks);
    bytes += f.body.length;
    hdr += f.headerBytes;
    msgs += r.n;
    return { n: r.n, next: Number(f.extFields.nextBeginOffset), code: 0 };
  };
  // the end of each queue (the preload is complete): pull until the offset reaches it
  const ends: number[] = [];
  {
    const c = conns[0]!;
    for (let q = 0; q < queues; q++) {
      const f = await c.invoke(30, { topic, queueId: String(q) }); // GET_MAX_OFFSET
      ends.push(Number(f.extFields.offset));
    }
    if (mode === 'serial') console.log(`    queue ends: ${ends.join(' ')}`);
  }
  const cpu0 = treeCpuSeconds(cpuRoots);
  const t0 = process.hrtime.bigint();
  if (mode === 'serial') {
    const c = conns[0]!;
    const off = new Array<number>(queues).fill(0);
    for (let done = 0; done < queues; ) {
      done = 0;
      for (let q = 0; q < queues; q++) {
        if (off[q]! >= ends[q]!) {
          done++;
          continue;
        }
        off[q] = (await pullOne(c, `${groupTag}s`, q, off[q]!)).next;
      }
    }
  } else {
    await Promise.all(conns.flatMap((c, g) => Array.from({ length: queues }, async (_, q) => {
      let off = 0;
      while (off < ends[q]!) {
        const r = await pullOne(c, `${groupTag}g${g}`, q, off);
        if (r.code !== 0) throw new Error(`pull ${q}@${off}: code ${r.code}`);
        off = r.next;
      }
    })));
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = treeCpuSeconds(cpuRoots) - cpu0;
  for (const c of conns) c.close();
  return {
    mode, pulls: rtt.length, msgs, seconds: r3(seconds), msgsPerSec: Math.round(msgs / seconds), brokerCpuS: r3(cpu), brokerUsPerMsg: r3((cpu * 1e6) / msgs),
    rttUs: { p50: r1(pct(rtt, 0.5)), p90: r1(pct(rtt, 0.9)), p99: r1(pct(rtt, 0.99)), max: r1(pct(rtt, 1)) },
    firstByteUs: { p50: r1(pct(fb, 0.5)), p99: r1(pct(fb, 0.99)) },
    transferUs: { p50: r1(pct(tr, 0.5)), p99: r1(pct(tr, 0.99)) },
    recordsPerReply: { min: Math.min(...recs), p50: pct(recs, 0.5), mean: r1(msgs / recs.length) },
    readsPerReply: { p50: pct(reads, 0.5), mean: r1(reads.reduce((s, x) => s + x, 0) / reads.length), max: Math.max(...reads) },
    replyBytes: Math.round(bytes / rtt.length), headerBytes: Math.round(hdr / rtt.length),
  };
}

/** A pull at the queue's end is held; one message sent; the time until the held pull answers. */
async function longPollProbe(broker: string, topic: string, tries: number): Promise<{ wakeMs: number[]; heldCode: number[]; extFields: Record<string, string> }> {
  const c = await ProbeConn.open(broker);
  const s = await ProbeConn.open(broker);
  const wake: number[] = [];
  const codes: number[] = [];
  let ext: Record<string, string> = {};
  try {
    for (let i = 0; i < tries; i++) {
      const max = Number((await c.invoke(30, { topic, queueId: '0' })).extFields.offset);
      const held = c.invoke(11, { consumerGroup: 'ProbeLongPoll', topic, queueId: '0', queueOffset: String(max), maxMsgNums: '32', sysFlag: String(2 | 4), commitOffset: '0', suspendTimeoutMillis: '15000', subscription: '*', subVersion: '0', expressionType: 'TAG' });
      await new Promise((r) => setTimeout(r, 300));
      const t0 = process.hrtime.bigint();
      const sent = await s.invoke(10, { producerGroup: 'ProbeProducer', topic, defaultTopic: 'TBW102', defaultTopicQueueNums: '8', queueId: '0', sysFlag: '0', bornTimestamp: String(Date.now()), flag: '0', properties: 'WAIT\u0001true\u0002', reconsumeTimes: '0', unitMode: 'false', batch: 'false' }, Buffer.alloc(1024, 0x61));
      if (sent.code !== 0) throw new Error(`send: ${sent.code} ${sent.remark}`);
      const f = await held;
      wake.push(r3(Number(f.doneNs - t0) / 1e6));
      codes.push(f.code);
      ext = f.extFields;
    }
  } finally {
    c.close();
    s.close();
  }
  return { wakeMs: wake, heldCode: codes, extFields: ext };
}

async function main(): Promise<void> {
  installCleanup();
  const args = process.argv.slice(2);
  const opt = (k: string, d: string): string => {
    const i = args.indexOf(`--${k}`);
    return i >= 0 ? args[i + 1]! : d;
  };
  const only = opt('only', '');
  const messages = Number(opt('messages', '200000'));
  const passes = Number(opt('passes', '4'));
  const brokerCpus = opt('broker-cpus', '0');
  const tsmqRoot = opt('tsmq-root', REPO);
  const lgDir = mavenBuild('loadgen', JAVA_DIR, [join(JAVA_DIR, 'pom.xml'), join(JAVA_DIR, 'src')], ['compile', 'dependency:copy-dependencies']);
  const srvDir = mavenBuild('apache-server-5.3.3', SERVER_POM_DIR, [join(SERVER_POM_DIR, 'pom.xml')], ['dependency:copy-dependencies'], { 'rocketmq.server.version': '5.3.3' });
  const lgCp = `${join(lgDir, 'classes')}:${join(lgDir, 'lib', '*')}`;
  const srvLib = join(srvDir, 'lib');
  const systems = (['apache', 'tsmq'] as const).filter((s) => !only || s === only);
  const out: Record<string, unknown> = { loadAtStart: loadavg()[0] };
  for (const system of systems) {
    let sys: Running | null = null;
    try {
      const peer = { dir: '/tmp', flush: 'ASYNC_FLUSH' as const, cpus: brokerCpus, repo: REPO };
      sys = system === 'apache'
        ? await startApache({ ...peer, version: '5.3.3', classpath: join(srvLib, '*'), libDir: srvLib, brokerHeap: '4g', namesrvHeap: '1g' })
        : await startTsmq({ ...peer, root: tsmqRoot });
      console.log(`${sys.describe}`);
      const topic = `Probe${Date.now().toString(36)}`;
      const gens = await GeneratorGroup.start(1, lgCp, sys.namesrv, opt('client-cpus', '1'), REPO, system);
      try {
        const pre = await gens.gens[0]!.call(`preload topic=${topic} messages=${messages} size=1024 queues=8`, 'preloaded', 1_800_000);
        console.log(`  preloaded ${String(pre.ok)} in ${String(pre.seconds)} s`);
      } finally {
        await gens.stop();
      }
      await brokerAddrOf(sys.namesrv, 'TBW102').catch((e: unknown) => console.log(`  TBW102 route: ${String(e)}`));
      const route = await brokerAddrOf(sys.namesrv, topic);
      const broker = route.addr;
      console.log(`  route: broker ${broker}, ${route.queues} read queues`);
      out[`${system}.readQueues`] = route.queues;
      // one reply's header and a record's properties
      {
        const c = await ProbeConn.open(broker);
        const f = await c.invoke(11, { consumerGroup: 'ProbeLook', topic, queueId: '0', queueOffset: '0', maxMsgNums: '32', sysFlag: '6', commitOffset: '0', suspendTimeoutMillis: '15000', subscription: '*', subVersion: '0', expressionType: 'TAG' });
        const r = records(f.body);
        console.log(`  one reply: code ${f.code}, ${r.n} records, ${f.body.length} B body, header ${f.headerBytes} B ${JSON.stringify(f.extFields)}; properties of a record: ${r.properties}`);
        c.close();
        out[`${system}.look`] = { records: r.n, bodyBytes: f.body.length, headerBytes: f.headerBytes, extFields: f.extFields, properties: r.properties };
      }
      const res: PassStats[] = [];
      for (let i = 0; i < passes; i++) {
        for (const mode of ['serial', 'fan'] as const) {
          const st = await pass(mode, broker, topic, route.queues, `Probe${i}${mode}`, sys.cpuRoots);
          res.push(st);
          console.log(`  pass ${i} ${mode}: ${JSON.stringify(st)} load ${loadavg()[0]!.toFixed(2)}`);
        }
      }
      out[`${system}.passes`] = res;
      const lp = await longPollProbe(broker, topic, 5);
      console.log(`  long polling: wake ${JSON.stringify(lp.wakeMs)} ms, codes ${JSON.stringify(lp.heldCode)}, ext ${JSON.stringify(lp.extFields)}`);
      out[`${system}.longPoll`] = lp;
    } finally {
      await sys?.stop();
    }
  }
  console.log(`RESULT ${JSON.stringify(out)}`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
