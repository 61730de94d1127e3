/**
 * Master/slave replication (docs/ha.md). The master is an embedded DefaultMessageStore in this
 * process; the slave is a SLAVE store in a child process (bench/ha/slave-child.ts, its own event
 * loop) replicating over loopback. Default 1 GiB segments, ASYNC_FLUSH on both, 1 KiB messages
 * over 4 topics × 4 queues (the store benchmark's load).
 *
 *   1. catch-up: the master holds a backlog (`ha.backlogMiB`), an empty slave starts; time until
 *      the slave has acknowledged everything → replication MB/s;
 *   2. lag under load: the store-append load (`ha.messages`, 1024 puts in flight) with the slave
 *      attached; lag = master max offset − highest slave ack, sampled every 5 ms; append msgs/s
 *      beside the same-run store-append figure (no slave); time for the slave to catch up after;
 *   3. send latency: 64 closed-loop producers for `ha.seconds`, ASYNC_MASTER vs SYNC_MASTER (each
 *      put waits for the slave ack), both with the slave attached; p50/p99.
 *
 * Options (--set): ha.backlogMiB (512 quick / 2048 full), ha.messages (500000 / 2000000),
 * ha.seconds (10 / 30), ha.producers (64).
 */
import { join } from 'node:path';
import { BenchChild } from '../lib/child.js';
import { warmPageCache } from '../lib/disk-ops.js';
import { sleep } from '../lib/os.js';
import { LatencyRecorder, MiB, mbPerSec, nowMs, perSec, round3 } from '../lib/stats.js';
import { describeFailures, messagePool, openBenchStore, putClosedLoop, putWindowed, type PutRun } from '../lib/store-load.js';
import type { BenchContext, BenchOutput, Metric } from '../lib/types.js';
import type { DefaultMessageStore } from '../../src/store/default-message-store.js';

const RECORD_BYTES_ESTIMATE = 1200;

/**
 * putWindowed, but the event loop turns after every window (setImmediate), as it does in a
 * broker where puts arrive from sockets: the master's HA connections read acks and the lag
 * sampler runs. (A loop of resolved promises alone never leaves the microtask queue.)
 */
async function putWindowedYielding(store: DefaultMessageStore, pool: ReturnType<typeof messagePool>, count: number, window: number, startIndex: number): Promise<PutRun> {
  const total: PutRun = { count, ok: 0, notOk: new Map(), recordBytes: 0, bodyBytes: 0, elapsedMs: 0 };
  const t0 = nowMs();
  for (let done = 0; done < count; done += window) {
    const r = await putWindowed(store, pool, Math.min(window, count - done), window, startIndex + done);
    total.ok += r.ok;
    total.recordBytes += r.recordBytes;
    total.bodyBytes += r.bodyBytes;
    for (const [k, v] of r.notOk) total.notOk.set(k, (total.notOk.get(k) ?? 0) + v);
    await new Promise((resolve) => setImmediate(resolve));
  }
  total.elapsedMs = nowMs() - t0;
  return total;
}

export async function run(ctx: BenchContext): Promise<BenchOutput> {
  const full = ctx.mode === 'full';
  const backlogMiB = Number(ctx.options['ha.backlogMiB'] ?? (full ? 2048 : 512));
  const loadMessages = Number(ctx.options['ha.messages'] ?? (full ? 2_000_000 : 500_000));
  const seconds = Number(ctx.options['ha.seconds'] ?? (full ? 30 : 10));
  const producers = Number(ctx.options['ha.producers'] ?? 64);
  const masterRoot = join(ctx.workDir, 'master');
  const slaveRoot = join(ctx.workDir, 'slave');
  const volume = backlogMiB * MiB + loadMessages * RECORD_BYTES_ESTIMATE + 2 * seconds * 100_000 * RECORD_BYTES_ESTIMATE;
  ctx.log(`warming ${round3((2 * volume) / 1024 / MiB)} GiB of page cache (master and slave write the same bytes)`);
  warmPageCache(ctx.workDir, Math.ceil((2 * volume) / MiB) * MiB);
  const pool = messagePool();
  const notes: string[] = [];
  let master: DefaultMessageStore | null = await openBenchStore(masterRoot, { brokerRole: 'ASYNC_MASTER' });
  let slave: BenchChild | null = null;
  const startSlave = async (port: number): Promise<void> => {
    slave = BenchChild.start(ctx.repoRoot, join(ctx.repoRoot, 'bench/ha/slave-child.ts'), [JSON.stringify({ root: slaveRoot, masterAddress: `127.0.0.1:${port}`, config: {} })], { label: 'slave' });
    await slave.waitLine('READY', 60_000);
  };
  const acked = (): number => master!.getReplication()?.master?.getPush2SlaveMaxOffset() ?? 0;
  try {
    // 1. catch-up
    const backlogCount = Math.ceil((backlogMiB * MiB) / RECORD_BYTES_ESTIMATE);
    ctx.log(`backlog: ${backlogCount.toLocaleString('en-US')} messages (~${backlogMiB} MiB)`);
    await putWindowedYielding(master, pool, backlogCount, 1024, 0);
    const backlogBytes = master.getMaxPhyOffset();
    const port = (await master.startHA({ listenPort: 0, host: '127.0.0.1' })).master!.port;
    const t0 = nowMs();
    await startSlave(port);
    const slaveStartMs = nowMs() - t0;
    const t1 = nowMs();
    while (acked() < backlogBytes) await sleep(5);
    const catchUpMs = nowMs() - t1;
    const catchUpMBps = mbPerSec(backlogBytes, catchUpMs);
    ctx.log(`catch-up of ${round3(backlogBytes / MiB)} MiB: ${round3(catchUpMs)} ms (${round3(catchUpMBps)} MB/s)`);

    // 2. lag under the append load
    const lag = new LatencyRecorder(1 << 16);
    let maxLag = 0;
    const sampler = setInterval(() => {
      const l = master!.getMaxPhyOffset() - acked();
      lag.add(l / MiB);
      if (l > maxLag) maxLag = l;
    }, 5);
    ctx.log(`${loadMessages.toLocaleString('en-US')} messages with the slave attached`);
    const load = await putWindowedYielding(master, pool, loadMessages, 1024, backlogCount);
    clearInterval(sampler);
    const endOffset = master.getMaxPhyOffset();
    const t2 = nowMs();
    while (acked() < endOffset) await sleep(1);
    const drainMs = nowMs() - t2;
    const loadMsgsPerSec = perSec(load.ok, load.elapsedMs);
    const lagS = lag.summary();

    // 3. send latency, ASYNC_MASTER vs SYNC_MASTER, slave attached
    ctx.log(`ASYNC_MASTER: ${producers} closed-loop producers for ${seconds} s`);
    await putClosedLoop(master, pool, producers, 2000);
    const asyncRun = await putClosedLoop(master, pool, producers, seconds * 1000);
    await slave!.stop();
    slave = null;
    await master.shutdown();
    master = null;
    master = await openBenchStore(masterRoot, { brokerRole: 'SYNC_MASTER' });
    const port2 = (await master.startHA({ listenPort: 0, host: '127.0.0.1' })).master!.port;
    await startSlave(port2);
    const m2 = master;
    while (acked() < m2.getMaxPhyOffset()) await sleep(5);
    ctx.log(`SYNC_MASTER: ${producers} closed-loop producers for ${seconds} s`);
    await putClosedLoop(master, pool, producers, 2000);
    const syncRun = await putClosedLoop(master, pool, producers, seconds * 1000);
    const a = asyncRun.latency.summary();
    const s = syncRun.latency.summary();

    const appendRef = ctx.figures['store-append.msgsPerSec'];
    const cacheRef = ctx.figures['disk.seqWrite1MiBCacheMBps'];
    const metrics: Metric[] = [
      {
        name: 'catch-up replication MB/s (empty slave, backlog)',
        value: catchUpMBps,
        unit: 'MB/s',
        ...(cacheRef ? { reference: { key: 'disk.seqWrite1MiBCacheMBps', label: 'seq 1 MiB writes, page cache', value: cacheRef, unit: 'MB/s' } } : {}),
      },
      {
        name: 'append 1 KiB with a slave attached, msgs/s',
        value: loadMsgsPerSec,
        unit: 'msgs/s',
        ...(appendRef ? { reference: { key: 'store-append.msgsPerSec', label: 'store-append, no slave (same run)', value: appendRef, unit: 'msgs/s' } } : {}),
      },
      { name: 'replication lag under that load, p50', value: lagS.p50Ms, unit: 'MiB' },
      { name: 'replication lag under that load, p99', value: lagS.p99Ms, unit: 'MiB' },
      { name: 'replication lag, max', value: maxLag / MiB, unit: 'MiB' },
      { name: 'slave caught up after the load ended in', value: drainMs, unit: 'ms' },
      { name: `ASYNC_MASTER put p50, ${producers} producers`, value: a.p50Ms, unit: 'ms' },
      { name: `ASYNC_MASTER put p99, ${producers} producers`, value: a.p99Ms, unit: 'ms' },
      { name: `SYNC_MASTER put p50, ${producers} producers`, value: s.p50Ms, unit: 'ms', reference: { key: 'ha.asyncP50Ms', label: 'ASYNC_MASTER p50 (this run)', value: a.p50Ms, unit: 'ms' } },
      { name: `SYNC_MASTER put p99, ${producers} producers`, value: s.p99Ms, unit: 'ms', reference: { key: 'ha.asyncP99Ms', label: 'ASYNC_MASTER p99 (this run)', value: a.p99Ms, unit: 'ms' } },
      { name: 'ASYNC_MASTER msgs/s (closed loop)', value: perSec(asyncRun.ok, asyncRun.elapsedMs), unit: 'msgs/s' },
      { name: 'SYNC_MASTER msgs/s (closed loop)', value: perSec(syncRun.ok, syncRun.elapsedMs), unit: 'msgs/s' },
    ];
    notes.push(
      `Catch-up: ${round3(backlogBytes / MiB)} MiB backlog, slave process start ${round3(slaveStartMs)} ms (not counted), then ${round3(catchUpMs)} ms until the master saw an ack of its max offset; frames of haTransferBatchSize 32 KiB.`,
      `Load: ${load.ok.toLocaleString('en-US')} puts (${describeFailures(load.notOk)}) in ${round3(load.elapsedMs)} ms with the slave attached; lag sampled every 5 ms (${lagS.count} samples, mean ${round3(lagS.meanMs)} MiB); the slave acked the last byte ${round3(drainMs)} ms after the last put returned.`,
      `Latency: ASYNC_MASTER p50/p99/max ${round3(a.p50Ms)}/${round3(a.p99Ms)}/${round3(a.maxMs)} ms (${describeFailures(asyncRun.notOk)}); SYNC_MASTER ${round3(s.p50Ms)}/${round3(s.p99Ms)}/${round3(s.maxMs)} ms (${describeFailures(syncRun.notOk)}). SYNC_MASTER adds one loopback round trip to the slave (frame out, ack back) to each put; with ${producers} producers in flight acks are shared by many puts.`,
    );
    return {
      metrics,
      figures: { catchUpMBps, lagP99MiB: lagS.p99Ms, asyncP50Ms: a.p50Ms, asyncP99Ms: a.p99Ms, syncP50Ms: s.p50Ms, syncP99Ms: s.p99Ms },
      notes,
      details: { backlogBytes, catchUpMs, slaveStartMs, lag: lagS, maxLagBytes: maxLag, drainMs, load: { ...load, notOk: Object.fromEntries(load.notOk) }, async: a, sync: s },
    };
  } finally {
    const sl = slave as BenchChild | null;
    if (sl) await sl.stop().catch(() => undefined);
    await master?.shutdown().catch(() => undefined);
  }
}
