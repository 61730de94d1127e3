/**
 * In-process A/B of the broker's per-pull work: two source trees' BrokerControllers (each with a
 * real DefaultMessageStore under a temp dir) in one process, pulled alternately, so both sides see
 * the same machine load at the same time (on a shared machine, broker processes started one after
 * the other see different loads: bench/broker/pull-ab.ts's CPU figures moved 2× between rounds).
 *
 * Per side: `messages` single SEND_MESSAGE_V2 (310) of `size` bytes round robin over 8 queues (one
 * queue's records interleaved with the 7 others', as the vs-apache consume preload leaves them),
 * sent through the broker's handler; then `rounds` rounds, each side in turn (order alternating),
 * of: every queue pulled from 0 to its end, PULL_MESSAGE (11) of 32 (sysFlag 4: subscription `*`
 * in the request, as the raw consumer sends), the requests taken round robin over the queues; each
 * request goes to the broker's registered handler (BrokerController.handlerFor: the static-topic
 * wrapper and the pull processor), its reply is encoded into a FrameBatch (the frame bytes a socket
 * would get) and its onWritten hook runs, as after a socket write. No sockets: the
 * figure is the broker's JavaScript per pull (request dispatch, header decode, checks, store
 * getMessage with its copy, offsets, stats, reply encode), not the kernel's.
 *
 * Reported per side: CPU µs per pulled message (process.cpuUsage over the side's pulls; user and
 * system), medians over the rounds, and B / A.
 *
 * Usage: npx tsx bench/broker/pull-inproc-ab.ts --a <root> --b <root> [--rounds 9] [--messages 200000]
 *        [--size 1024] [--label-a A] [--label-b B]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, parseRootAbArgs, type RootAbOpts } from '../lib/ab-child.js';

type Opts = RootAbOpts;

const QUEUES = 8;
const TOPIC = 'InprocAb';
const GROUP = 'GID_INPROC_AB';

/* eslint-disable @typescript-eslint/no-explicit-any -- modules of another source tree, loaded by path */
interface Side {
  label: string;
  /** Sends one request to the broker's handler; resolves with its reply (null: none). */
  call: (code: number, ext: Record<string, string | number | boolean>, body: Buffer | null) => Promise<any>;
  close: () => Promise<void>;
}

async function openSide(root: string, label: string): Promise<Side> {
  const mod = (rel: string): Promise<any> => import(pathToFileURL(join(root, rel)).href);
  const { BrokerController } = await mod('src/broker/broker-controller.ts');
  const { DefaultMessageStore } = await mod('src/store/default-message-store.ts');
  const { silentLogger } = await mod('src/common/logging/logger.ts');
  const { systemClock } = await mod('src/common/time/clock.ts');
  const { createRequestCommand } = await mod('src/remoting/protocol/commands.ts');
  const { FrameBatch } = await mod('src/remoting/protocol/frame-batch.ts');
  const dir = mkdtempSync(join(tmpdir(), 'tsmq-pull-inproc-'));
  const store = await DefaultMessageStore.open({ storePathRootDir: join(dir, 'store') }, { logger: silentLogger, clock: systemClock });
  const broker = await BrokerController.create({
    brokerConfig: { storePathRootDir: join(dir, 'store'), namesrvAddr: '', listenPort: '10911' },
    clock: systemClock,
    logger: silentLogger,
    store,
  });
  const batch = new FrameBatch();
  // what the connection does with a reply: encode it (header into a chunk, a large body as its own piece), then the write hook
  const channel = {
    id: `inproc-${label}`,
    remoteAddress: '127.0.0.1:50001',
    closed: false,
    send(cmd: any): boolean {
      batch.add(cmd);
      batch.take();
      cmd.onWritten?.(null);
      return true;
    },
    onClose(): void {},
  };
  return {
    label,
    call: async (code, ext, body) => {
      const request = createRequestCommand(code, ext, body);
      const reply = await broker.handlerFor(code)({ channel, request });
      if (reply) channel.send({ ...reply, opaque: request.opaque, flag: reply.flag | 1 });
      return reply;
    },
    close: async () => {
      await broker.shutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function load(side: Side, o: Opts): Promise<void> {
  const body = Buffer.alloc(o.size, 0x61);
  for (let i = 0; i < o.messages; i++) {
    const props = `UNIQ_KEY\u0001${(0x20000000 + i).toString(16).toUpperCase().padStart(32, '0')}\u0002WAIT\u0001true\u0002TAGS\u0001TagA\u0002`;
    const r = await side.call(310, { a: 'PID_AB', b: TOPIC, c: 'TBW102', d: QUEUES, e: i % QUEUES, f: 0, g: Date.now(), h: 0, i: props, j: 0, k: false }, body);
    if (!r || r.code !== 0) throw new Error(`${side.label}: send ${i}: code ${r?.code} ${r?.remark}`);
  }
}

/** Pulls every queue from 0 to its end (32 per pull, round robin over the queues); returns the messages pulled. */
async function pullAll(side: Side): Promise<number> {
  const offsets = new Array<number>(QUEUES).fill(0);
  const done = new Array<boolean>(QUEUES).fill(false);
  let messages = 0;
  let open = QUEUES;
  while (open > 0) {
    for (let q = 0; q < QUEUES; q++) {
      if (done[q]) continue;
      const r = await side.call(11, { consumerGroup: GROUP, topic: TOPIC, queueId: q, queueOffset: offsets[q]!, maxMsgNums: 32, sysFlag: 4, commitOffset: 0, suspendTimeoutMillis: 0, subscription: '*', subVersion: 0 }, null);
      if (r.code === 0) {
        const next = Number(r.extFields.nextBeginOffset);
        messages += next - offsets[q]!;
        offsets[q] = next;
      } else if (r.code === 19 || r.code === 20 || r.code === 21) {
        done[q] = true;
        open--;
      } else throw new Error(`${side.label}: pull code ${r.code}: ${r.remark}`);
    }
  }
  return messages;
}

async function main(): Promise<void> {
  const o = parseRootAbArgs(process.argv.slice(2), { rounds: 9, messages: 200_000 });
  const sides = [await openSide(o.a, o.labelA), await openSide(o.b, o.labelB)];
  try {
    for (const side of sides) await load(side, o);
    const rows = new Map<string, Array<{ totalUs: number; userUs: number; sysUs: number }>>();
    for (const side of sides) {
      rows.set(side.label, []);
      await pullAll(side); // warm-up pass (JIT, read cache, body pool)
    }
    for (let round = 0; round < o.rounds; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const c0 = process.cpuUsage();
        const n = await pullAll(side);
        const c = process.cpuUsage(c0);
        const row = { totalUs: (c.user + c.system) / n, userUs: c.user / n, sysUs: c.system / n };
        rows.get(side.label)!.push(row);
        console.log(`ROUND ${JSON.stringify({ round, label: side.label, messages: n, ...row })}`);
      }
    }
    console.log('\n| side | CPU µs per pulled message (median) | user / sys (median) | rounds |');
    console.log('|---|---|---|---|');
    const med: Record<string, number> = {};
    for (const side of sides) {
      const rs = rows.get(side.label)!;
      med[side.label] = median(rs.map((r) => r.totalUs));
      console.log(`| ${side.label} | ${med[side.label]!.toFixed(3)} | ${median(rs.map((r) => r.userUs)).toFixed(3)} / ${median(rs.map((r) => r.sysUs)).toFixed(3)} | ${rs.map((r) => r.totalUs.toFixed(3)).join(', ')} |`);
    }
    console.log(`\n${o.labelB} / ${o.labelA}: ${(med[o.labelB]! / med[o.labelA]!).toFixed(3)}`);
  } finally {
    for (const side of sides) await side.close();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
