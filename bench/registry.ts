/**
 * Every benchmark, in run order. Baselines and peers come before the tsmq measurements that
 * are compared with them; `needs` makes `--only x` pull in x's references too.
 * Each `file` exports `run(ctx: BenchContext): Promise<BenchOutput>` and runs in its own child
 * process (fresh heap, no state shared with the previous benchmark).
 */

export interface BenchEntry {
  name: string;
  title: string;
  /** Path relative to bench/. */
  file: string;
  needs?: string[];
  fullOnly?: boolean;
  /** Not part of a quick `npm run bench`; runs with `--full`, `--all`, or when named with `--only`. */
  optIn?: boolean;
}

export const BENCHES: BenchEntry[] = [
  { name: 'disk', title: 'Baseline: this machine\'s disk path from Node', file: 'baseline/disk.ts' },
  { name: 'write-path', title: 'Write-path choice: writeSync vs write buffer vs mmap, sparse vs pre-written', file: 'io/write-path.ts', optIn: true },
  { name: 'store-append', title: 'Store append, 1 KiB, 4 topics x 4 queues, ASYNC_FLUSH', file: 'store/append.ts', needs: ['disk'] },
  { name: 'store-append-sync', title: 'Store append, SYNC_FLUSH, 64 concurrent producers', file: 'store/append-sync.ts', needs: ['disk'] },
  { name: 'store-pull', title: 'Store getMessage, 32-message batches, page cache and cold', file: 'store/pull.ts', needs: ['disk'] },
  { name: 'store-recovery', title: 'Recovery time after a crash vs store size', file: 'store/recovery.ts', needs: ['disk'] },
  { name: 'store-recovery-queues', title: 'Recovery time after a crash: 1 queue vs 10,000 queues, same bytes', file: 'store/recovery-queues.ts', needs: ['disk'] },
  { name: 'ha-replication', title: 'Master/slave replication: catch-up MB/s, lag under the append load, SYNC_MASTER vs ASYNC_MASTER put latency', file: 'ha/replication.ts', needs: ['disk', 'store-append'] },
  { name: 'redis-streams', title: 'Peer: Redis Streams XADD (appendonly, everysec)', file: 'peer/redis-streams.ts' },
  { name: 'broker-e2e', title: 'Broker end to end over loopback', file: 'broker/e2e.ts', needs: ['redis-streams'] },
  { name: 'broker-e2e-metrics', title: 'Broker end to end: metrics off vs on (PROM + scrapes), same load, same run', file: 'broker/metrics-overhead.ts' },
  { name: 'broker-scaling', title: 'Broker on 1 vs 2 cores (taskset), IndexFile built on the store thread vs a worker thread', file: 'broker/scaling.ts', optIn: true },
  { name: 'timer', title: 'Timer messages: 1 M due in the same second (lateness), pending timers RSS and SIGKILL recovery', file: 'timer/timer.ts' },
  { name: 'broker-rss', title: 'Broker RSS while holding a large store', file: 'broker/rss.ts', fullOnly: true },
];
