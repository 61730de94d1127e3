/**
 * Apache RocketMQ 5.3.3 remoting client in POP mode against `tsmq start` (child process, free
 * ports, temp store). The Java side is test/interop/java/rocketmq5 PopPeer (one JVM per scenario
 * group, JSON lines): `mqadmin setConsumeMode -m POP` (SET_MESSAGE_REQUEST_MODE 401), then a
 * DefaultMQPushConsumer with clientRebalance=false that learns POP mode from QUERY_ASSIGNMENT (400)
 * and consumes with POP_MESSAGE / ACK_MESSAGE / CHANGE_MESSAGE_INVISIBLETIME. An RPC hook counts
 * every request code and answer. Skips when `java` or `mvn` is missing. See docs/internals/pop.md.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../support/tsmq-process.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type BuiltPeer, type JavaRun } from './support/java-peers.js';

type Line = Record<string, unknown>;
interface Rpc {
  requests: Record<string, number>;
  responses: Record<string, number>;
  pulledTopics: string[];
}
const linesOf = (run: JavaRun, type: string): Line[] => run.lines.filter((l) => l.type === type);
const rpcOf = (run: JavaRun): Rpc => linesOf(run, 'rpc')[0] as unknown as Rpc;
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

function explain(run: JavaRun): string {
  const errs = linesOf(run, 'error').map((e) => `${e.op as string}: ${e.message as string}`);
  return `${errs.length ? `\nerrors:\n  ${errs.join('\n  ')}` : ''}\nrpc: ${JSON.stringify(rpcOf(run))}\nstderr (tail):\n${run.stderr.split('\n').filter((l) => !/^\s+at /.test(l)).slice(-20).join('\n')}`;
}

/** Deliveries per key, in arrival order. */
function deliveriesByKey(run: JavaRun): Map<string, Line[]> {
  const m = new Map<string, Line[]>();
  for (const l of linesOf(run, 'recv')) {
    const k = l.key as string;
    m.set(k, [...(m.get(k) ?? []), l]);
  }
  return m;
}

describe('Apache RocketMQ 5.3.3 remoting client in POP mode against tsmq start', { skip: javaSkipReason(), timeout: 240_000 }, () => {
  let storeDir: string;
  let broker: TsmqProcess;
  let peer: BuiltPeer;

  before(async () => {
    peer = await buildPeer('rocketmq5');
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-interop-pop-'));
    broker = await TsmqProcess.start({ storeDir });
  });

  after(async () => {
    await broker?.stop();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  async function popPeer(opts: Record<string, string | number | boolean>, timeoutMs = 60_000): Promise<JavaRun> {
    const run = await runJava(peer, 'tsmq.interop.PopPeer', [broker.namesrvAddr, 'run', ...Object.entries(opts).map(([k, v]) => `${k}=${v}`)], { timeoutMs });
    assertRanOk(run, 'PopPeer');
    assert.deepEqual(linesOf(run, 'error'), [], explain(run));
    return run;
  }

  it('mqadmin setConsumeMode switches the group to POP; every message is consumed and acked once; failed ones come back after the invisible time', async () => {
    const topic = 'PopIopA';
    const n = 40;
    const failKeys = [`${topic}-3`, `${topic}-17`];
    const run = await popPeer({ topic, group: 'GPopIopA', n, failKeys: failKeys.join(','), expect: n, invisibleMs: 5000, timeoutMs: 30_000 });
    const mode = linesOf(run, 'mode')[0]?.output as string;
    assert.match(mode, new RegExp(`set consume mode to ${broker.brokerAddr} success`), mode);
    assert.equal(linesOf(run, 'sent').filter((s) => s.status === 'SEND_OK').length, n);

    const rpc = rpcOf(run);
    assert.equal(rpc.responses['401:0'], 1, explain(run));
    assert.ok((rpc.responses['400:0'] ?? 0) >= 1, explain(run));
    assert.ok((rpc.responses['200050:0'] ?? 0) >= 1, explain(run));
    // every ack the client sent succeeded: one per message, none for a failed first delivery
    assert.equal(rpc.requests['200051'], n, explain(run));
    assert.equal(rpc.responses['200051:0'], n, explain(run));
    assert.equal(rpc.responses['200053:0'], failKeys.length, explain(run));
    assert.ok(!rpc.pulledTopics.includes(topic), `the consumer pulled ${topic}: not in POP mode`);

    const byKey = deliveriesByKey(run);
    const keys = range(n).map((i) => `${topic}-${i}`);
    assert.deepEqual([...byKey.keys()].sort(), [...keys].sort(), 'every message delivered');
    const duplicates = keys.filter((k) => !failKeys.includes(k) && byKey.get(k)!.length !== 1);
    assert.deepEqual(duplicates, [], 'no message delivered again after its ack');
    for (const k of keys) {
      const d = byKey.get(k)!;
      assert.equal(d.filter((x) => x.result === 'ack').length, 1, `${k} acked once`);
      const ck = (d[0]!.popCk as string).split(' ');
      assert.equal(ck.length, 8, `POP_CK of ${k}: ${d[0]!.popCk as string}`);
      assert.equal(ck[2], '5000');
      assert.equal(ck[5], 'broker-a');
      assert.equal(Number(ck[6]), d[0]!.queueId);
      assert.equal(Number(ck[7]), d[0]!.queueOffset);
    }
    for (const k of failKeys) {
      const d = byKey.get(k)!;
      assert.deepEqual(
        d.map((x) => `${x.result as string}:${x.reconsumeTimes as number}`),
        ['fail:0', 'ack:1'],
        `${k}: failed once, redelivered with reconsumeTimes 1`,
      );
      const gap = (d[1]!.at as number) - (d[0]!.at as number);
      assert.ok(gap >= 900 && gap < 5000, `${k} came back ${gap} ms after the failure (invisible time 1 s)`);
    }
  });

  it('across a clean broker restart unacked deliveries come back after their invisible time and acked ones do not', async () => {
    const topic = 'PopIopB';
    const group = 'GPopIopB';
    const n = 12;
    const holdKeys = [`${topic}-2`, `${topic}-5`, `${topic}-9`];
    const first = await popPeer({ topic, group, n, holdKeys: holdKeys.join(','), expect: n - holdKeys.length, invisibleMs: 8000, idleMs: 800, timeoutMs: 20_000 });
    const firstByKey = deliveriesByKey(first);
    assert.equal(firstByKey.size, n, explain(first));
    for (const [k, d] of firstByKey) assert.deepEqual(d.map((x) => x.result), [holdKeys.includes(k) ? 'hold' : 'ack'], `${k} in the first run`);
    assert.equal(rpcOf(first).responses['200051:0'], n - holdKeys.length, explain(first));
    const firstPopAt = Math.min(...holdKeys.map((k) => firstByKey.get(k)![0]!.at as number));

    assert.equal(await broker.stop(), 0, 'tsmq stopped cleanly');
    broker = await TsmqProcess.start({ storeDir, namesrvPort: broker.namesrvPort, listenPort: broker.listenPort, grpcPort: broker.grpcPort });

    // no setConsumeMode this time: the POP mode was persisted (config/messageRequestMode.json)
    const second = await popPeer({ topic, group, produce: false, setMode: false, expect: holdKeys.length, invisibleMs: 8000, idleMs: 1500, timeoutMs: 30_000 });
    const secondByKey = deliveriesByKey(second);
    assert.deepEqual([...secondByKey.keys()].sort(), [...holdKeys].sort(), `only the unacked messages come back${explain(second)}`);
    for (const k of holdKeys) {
      const d = secondByKey.get(k)!;
      assert.deepEqual(d.map((x) => `${x.result as string}:${x.reconsumeTimes as number}`), ['ack:1'], `${k} redelivered once as the second attempt`);
      assert.ok((d[0]!.at as number) - firstPopAt >= 7500, `${k} came back ${(d[0]!.at as number) - firstPopAt} ms after its first pop (invisible 8 s)`);
    }
    const rpc = rpcOf(second);
    assert.ok((rpc.responses['200050:0'] ?? 0) >= 1, explain(second));
    assert.equal(rpc.responses['200051:0'], holdKeys.length, explain(second));
    assert.ok(!rpc.pulledTopics.includes(topic), explain(second));
  });

  it('pop, then PULL mode committing further, then pop again: the pop starts at the committed offset, nothing is re-delivered (Apache getPopOffset)', async () => {
    const topic = 'PopIopC';
    const group = 'GPopIopC';
    const n = 8;
    const popped = await popPeer({ topic, group, n, expect: n, idleMs: 800, timeoutMs: 20_000 });
    assert.equal(deliveriesByKey(popped).size, n, explain(popped));
    // the same group in PULL mode: pulls the next n (from the offsets the pops committed) and commits past them
    const pulled = await popPeer({ topic, group, n, mode: 'PULL', expect: n, idleMs: 800, timeoutMs: 20_000 });
    assert.match(linesOf(pulled, 'mode')[0]?.output as string, /set consume mode to .* success/);
    assert.equal(linesOf(pulled, 'recv').length, n, explain(pulled));
    assert.ok(rpcOf(pulled).pulledTopics.includes(topic), `PULL mode pulled ${topic}${explain(pulled)}`);
    // back to POP: nothing left to hand out
    const again = await popPeer({ topic, group, produce: false, expect: 0, idleMs: 3000, timeoutMs: 6000 });
    assert.deepEqual(linesOf(again, 'recv').map((l) => l.key), [], `pulled messages re-delivered by pop${explain(again)}`);
    assert.ok((rpcOf(again).requests['200050'] ?? 0) >= 1, `the consumer popped${explain(again)}`);
  });
  it('mqadmin resetOffsetByTime: back to before the sends replays exactly the acked messages, once each; -1 skips what was not consumed', async () => {
    const topic = 'PopIopD';
    const group = 'GPopIopD';
    const n = 10;
    const keys = range(n).map((i) => `${topic}-${i}`).sort();
    const t0 = Date.now() - 1;
    const first = await popPeer({ topic, group, n, expect: n, idleMs: 800, timeoutMs: 20_000 });
    assert.deepEqual([...deliveriesByKey(first).keys()].sort(), keys, explain(first));
    assert.equal(rpcOf(first).responses['200051:0'], n, explain(first));

    // INVOKE_BROKER_TO_RESET_OFFSET (222) while no consumer is online: the pop state is reset on the broker
    const replay = await popPeer({ topic, group, produce: false, setMode: false, reset: t0, expect: n, idleMs: 1000, timeoutMs: 20_000 });
    const resetOut = linesOf(replay, 'reset')[0]?.output as string;
    assert.match(resetOut, /start reset consumer offset by specified, group\[GPopIopD\], topic\[PopIopD\], force\[true\]/, resetOut);
    assert.equal(rpcOf(replay).responses['222:0'], 1, explain(replay));
    const byKey = deliveriesByKey(replay);
    assert.deepEqual([...byKey.keys()].sort(), keys, `every message replayed${explain(replay)}`);
    for (const k of keys) assert.deepEqual(byKey.get(k)!.map((d) => `${d.result as string}:${d.reconsumeTimes as number}`), ['ack:0'], `${k} replayed once, as a first delivery`);
    assert.equal(rpcOf(replay).responses['200051:0'], n, explain(replay));

    // 4 more messages, then a reset to the end (-1): none of them is handed out
    const skipped = await popPeer({ topic, group, n: 4, setMode: false, reset: -1, expect: 0, idleMs: 2500, timeoutMs: 5000 });
    assert.equal(linesOf(skipped, 'sent').length, 4);
    assert.equal(rpcOf(skipped).responses['222:0'], 1, explain(skipped));
    assert.deepEqual(linesOf(skipped, 'recv').map((l) => l.key), [], `nothing after a reset to the end${explain(skipped)}`);
    assert.ok((rpcOf(skipped).requests['200050'] ?? 0) >= 1, `the consumer popped${explain(skipped)}`);

    // one queue by offset (`-b -q -o`: UPDATE_CONSUMER_OFFSET, then 222 with queueId and offset): queue 0 from offset 1 again
    const sent = [...linesOf(first, 'sent'), ...linesOf(skipped, 'sent')];
    const want = sent.filter((l) => l.queueId === 0 && (l.queueOffset as number) >= 1).map((l) => l.key as string).sort();
    assert.ok(want.length >= 2, `queue 0 got ${want.length} messages`);
    const byQueue = await popPeer({ topic, group, produce: false, setMode: false, resetQueue: `${broker.brokerAddr},0,1`, expect: want.length, idleMs: 1000, timeoutMs: 15_000 });
    assert.match(linesOf(byQueue, 'reset')[0]?.output as string, /reset consumer offset to 1/);
    assert.equal(rpcOf(byQueue).responses['15:0'], 1, explain(byQueue));
    assert.equal(rpcOf(byQueue).responses['222:0'], 1, explain(byQueue));
    const got = linesOf(byQueue, 'recv');
    assert.deepEqual(got.map((l) => l.key as string).sort(), want, `queue 0 from offset 1, nothing else${explain(byQueue)}`);
    assert.ok(got.every((l) => l.queueId === 0 && (l.queueOffset as number) >= 1));
  });

  it('PULL mode, online: mqadmin resetOffsetByTime -b -q 0 -o 1 while the consumer runs: its next pull of queue 0 answers PULL_OFFSET_MOVED and queue 0 is consumed again from 1', async () => {
    const topic = 'PopIopE';
    const group = 'GPopIopE';
    const n = 12;
    const run = await popPeer(
      { topic, group, n, mode: 'PULL', expect: n, idleMs: 1500, timeoutMs: 25_000, onlineResetQueue: `${broker.brokerAddr},0,1`, expectAfter: 1, rebalanceIntervalMs: 1000 },
      90_000,
    );
    const sent = linesOf(run, 'sent');
    const queue0 = sent.filter((l) => l.queueId === 0 && (l.queueOffset as number) >= 1 && l.key !== `${topic}-wake`).map((l) => l.key as string).sort();
    assert.ok(queue0.length >= 1, `queue 0 got ${queue0.length} messages from offset 1`);
    assert.match(linesOf(run, 'reset')[0]?.output as string, /reset consumer offset to 1/);
    assert.equal(rpcOf(run).responses['222:0'], 1, explain(run));
    const resetAt = linesOf(run, 'reset')[0]!.at as number;
    const after = linesOf(run, 'recv').filter((l) => (l.at as number) > resetAt);
    assert.deepEqual(after.map((l) => l.key as string).sort(), [...queue0, `${topic}-wake`].sort(), `queue 0 again from offset 1, then the wake message${explain(run)}`);
    assert.ok((rpcOf(run).responses['11:21'] ?? 0) >= 1, `a pull was answered PULL_OFFSET_MOVED${explain(run)}`);
  });
});
