/**
 * Seeded whole-store simulation (TigerBeetle VOPR style, docs/internals/simulation.md): one seed
 * picks a store configuration, a disk (size, faults, fsync-failure semantics) and a random
 * sequence of operations against a real DefaultMessageStore on a CrashFileSystem, driven by a
 * VirtualEventLoop on a ManualClock. After every restart (clean, process crash, power loss at
 * any I/O step, also during recovery) the recovered store is checked against the SimModel
 * (sim-checks.ts); while it runs, pulls, lookups and key queries are checked as they answer.
 *
 * Same seed ⇒ same run, byte for byte: all randomness comes from mulberry32 streams derived
 * from the seed, no real timer or wall clock is consulted, and the file system does no real I/O.
 *
 * Operations live in one table (`operations()`, single and batch puts among them); adding one is
 * one entry.
 */
import { silentLogger, type Logger } from '../../src/common/logging/logger.js';
import type { MessageInner } from '../../src/common/message/message.js';
import { decodeRecord, encodeRecord } from '../../src/common/message/record-codec.js';
import { ManualClock } from '../../src/common/time/clock.js';
import { DefaultMessageStore, type MessageStoreDeps } from '../../src/store/default-message-store.js';
import type { PutMessageResult, PutMessagesResult } from '../../src/store/message-store.js';
import { END_FILE_MIN_BLANK_LENGTH } from '../../src/common/message/record-layout.js';
import { RECORD_SIZE_SLACK_BYTES } from '../../src/store/commitlog/commit-log.js';
import { ManualDiskUsageProbe } from '../../src/store/retention/disk-usage-probe.js';
import type { StoreConfig } from '../../src/store/store-config.js';
import { mulberry32 } from '../support/prng.js';
import { CrashFileSystem, NO_FAULTS, type FsyncFailureSemantics } from './crash-file-system.js';
import { checkPullResult, checkRecoveredStore, identify, InvariantViolation, SIMID, type RestartKind, type RetentionContext } from './sim-checks.js';
import { SimModel, type SimMessage } from './sim-model.js';
import { drainMicrotasks, VirtualEventLoop } from './virtual-event-loop.js';

export interface SimulationOptions {
  seed: number;
  /** Operations to run (the run ends with one more restart and check). */
  ops: number;
  /** Overrides the seed's choice of what a failed fdatasync does to dirty pages. */
  fsyncFailure?: FsyncFailureSemantics;
  /** Keep this many trace lines for the failure report (default 40). */
  traceLines?: number;
}

export interface SimulationStats {
  seed: number;
  ops: number;
  flushDiskType: string;
  puts: number;
  /** putMessages calls (their messages count in `puts`). */
  batches: number;
  /** Batches answered without appendResults (all refused). */
  batchesRefused: number;
  /** Batches whose first record starts a CommitLog segment (rolled whole across a segment end, or the first in a new one). */
  batchesAtSegmentStart: number;
  putOk: number;
  refused: number;
  pulls: number;
  queries: number;
  lookups: number;
  topicDeletes: number;
  manualDeletes: number;
  cleanRestarts: number;
  processCrashes: number;
  powerLosses: number;
  crashesDuringRecovery: number;
  recoveriesChecked: number;
  faultWindows: number;
  injectedFaults: number;
  enospc: number;
  ioOps: number;
  fsyncs: number;
  lostUnacked: number;
  /** Index dispatch failures the store counted (their messages may be missing from the index). */
  indexFailures: number;
  expiredByRetention: number;
  virtualMs: number;
}

/** A broken invariant (or a store error) with everything needed to replay it. */
export class SimulationFailure extends Error {
  constructor(
    readonly seed: number,
    readonly opIndex: number,
    override readonly cause: unknown,
    readonly trace: string[],
  ) {
    super(
      `store simulation seed ${seed} failed at op ${opIndex}: ${cause instanceof Error ? cause.message : String(cause)}\n` +
        `last operations:\n  ${trace.join('\n  ')}\n` +
        `reproduce: TSMQ_SIM_SEED=${seed} node scripts/run-tests.mjs test/sim/store-simulation.test.ts`,
    );
    this.name = 'SimulationFailure';
  }
}

const START_MS = 1_700_000_000_000;
const ALL_HOURS = Array.from({ length: 24 }, (_, h) => String(h).padStart(2, '0')).join(';');
const MAX_USES_PER_KEY = 20;

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

interface Topic {
  name: string;
  queues: number;
}

interface Operation {
  name: string;
  weight: number;
  run: () => Promise<void>;
}

export async function runStoreSimulation(opts: SimulationOptions): Promise<SimulationStats> {
  const sim = new StoreSimulation(opts);
  return sim.run();
}

class StoreSimulation {
  private readonly rand: () => number;
  private readonly clock = new ManualClock(START_MS);
  private readonly loop = new VirtualEventLoop(this.clock);
  private fs: CrashFileSystem;
  private store: DefaultMessageStore | null = null;
  private readonly model = new SimModel();
  private cfg: Partial<StoreConfig>;
  private readonly probe: ManualDiskUsageProbe;
  private readonly topics: Topic[] = [];
  private topicCounter = 0;
  private keyCounter = 0;
  private pendingPuts = 0;
  /** Body size limit in force (maxMessageSize; changed at runtime by setMaxMessageSize). */
  private maxBody = 0;
  private incarnation = 0;
  private opIndex = -1;
  private faultOpsLeft = 0;
  private readonly withFaults: boolean;
  private readonly trace: string[] = [];
  private readonly retention: { minReservedMs: number; forcedPossible: boolean };
  readonly stats: SimulationStats;

  constructor(private readonly opts: SimulationOptions) {
    this.rand = mulberry32(opts.seed);
    const r = this.rand;
    const segment = this.pick([16 * 1024, 32 * 1024, 64 * 1024]);
    const sync = r() < 0.5;
    this.cfg = {
      storePathRootDir: `/sim/${opts.seed}/store`,
      mappedFileSizeCommitLog: segment,
      mappedFileSizeConsumeQueue: 20 * this.int(4, 40),
      maxMessageSize: Math.floor(segment / 4),
      flushDiskType: sync ? 'SYNC_FLUSH' : 'ASYNC_FLUSH',
      flushIntervalCommitLog: this.pick([10, 100, 500]),
      flushCommitLogLeastPages: this.pick([0, 1, 4]),
      flushCommitLogThoroughInterval: this.pick([1000, 10000]),
      flushIntervalConsumeQueue: this.pick([100, 1000]),
      flushConsumeQueueLeastPages: this.pick([0, 2]),
      maxHashSlotNum: this.int(16, 256),
      maxIndexNum: this.int(64, 512),
      fileReservedTime: this.pick([0.02, 0.1, 0.5, 2]),
      deleteWhen: r() < 0.7 ? ALL_HOURS : '04',
      cleanResourceInterval: this.pick([1000, 10000]),
      deleteCommitLogFilesInterval: this.pick([0, 100]),
      deleteConsumeQueueFilesInterval: this.pick([0, 100]),
      warmMapedFileEnable: this.pick(['', 'true', 'false']) as unknown as boolean,
      flushLeastPagesWhenWarmMapedFile: 2,
      checkCRCOnRecover: true, // false accepts torn records by design (docs/internals/simulation.md)
      commitCommitLogAsync: this.pick([false, true]), // the CommitLog commit as a pool write (CrashFileSystem.pwriteAsync)
    };
    this.withFaults = r() < 0.7;
    const tight = r() < 0.25;
    const capacity = tight ? segment * this.int(12, 30) : 512 * 1024 * 1024;
    this.fs = new CrashFileSystem(mulberry32(opts.seed ^ 0x5eed), this.clock, capacity);
    this.fs.fsyncFailure = opts.fsyncFailure ?? 'stay-dirty';
    this.fs.syncLatencyMs = this.pick([0, 2, 10]);
    // every reading the store takes counts: a cleaning pass that saw the forced ratio may delete
    // unexpired files, even if usage is below it again when the operation ends
    this.probe = new ManualDiskUsageProbe(() => {
      const ratio = this.fs.usedRatio();
      if (ratio >= 0.85) this.retention.forcedPossible = true;
      return ratio;
    });
    for (let i = 0, n = this.int(1, 4); i < n; i++) this.addTopic();
    this.retention = { minReservedMs: this.reservedMs(), forcedPossible: false };
    this.stats = {
      seed: opts.seed,
      ops: 0,
      flushDiskType: String(this.cfg.flushDiskType),
      puts: 0,
      batches: 0,
      batchesRefused: 0,
      batchesAtSegmentStart: 0,
      putOk: 0,
      refused: 0,
      pulls: 0,
      queries: 0,
      lookups: 0,
      topicDeletes: 0,
      manualDeletes: 0,
      cleanRestarts: 0,
      processCrashes: 0,
      powerLosses: 0,
      crashesDuringRecovery: 0,
      recoveriesChecked: 0,
      faultWindows: 0,
      injectedFaults: 0,
      enospc: 0,
      ioOps: 0,
      fsyncs: 0,
      lostUnacked: 0,
      indexFailures: 0,
      expiredByRetention: 0,
      virtualMs: 0,
    };
  }

  // ---- randomness helpers ----

  private int(lo: number, hi: number): number {
    return lo + Math.floor(this.rand() * (hi - lo + 1));
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rand() * xs.length)]!;
  }

  private note(line: string): void {
    this.trace.push(`#${this.opIndex} t+${this.clock.nowMs() - START_MS}ms d${this.fs.generation}${this.fs.crashed ? "!" : ""} ${line}`);
    const keep = this.opts.traceLines ?? Number(process.env.TSMQ_SIM_TRACE ?? 40);
    if (this.trace.length > keep) this.trace.splice(0, this.trace.length - keep);
  }

  private reservedMs(): number {
    return Number(this.cfg.fileReservedTime) * 3_600_000;
  }

  private addTopic(): void {
    this.topics.push({ name: `T${this.topicCounter++}`, queues: this.int(1, 4) });
  }

  private deps(): MessageStoreDeps {
    return { fs: this.fs, clock: this.clock, logger: process.env.TSMQ_SIM_LOG ? this.consoleLogger() : silentLogger, diskUsageProbe: this.probe, totalMemoryBytes: 1 << 30 };
  }

  /** TSMQ_SIM_LOG=1: the store's warn/error lines on stdout, stamped with virtual time (debugging a seed). */
  private consoleLogger(): Logger {
    const inc = this.incarnation;
    const line =
      (level: string) =>
      (obj: object | string, msg?: string): void => {
        if (level === 'debug' || (level === 'info' && process.env.TSMQ_SIM_LOG !== 'info')) return;
        const text = typeof obj === 'string' ? obj : `${msg ?? ''} ${JSON.stringify(obj, (_k, v: unknown) => (v instanceof Error ? v.message : v))}`;
        console.log(`  [store#${inc} ${level} t+${this.clock.nowMs() - START_MS}ms] ${text}`);
      };
    const logger: Logger = { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error'), child: () => logger } as unknown as Logger;
    return logger;
  }

  private get live(): DefaultMessageStore {
    if (!this.store) throw new Error('no store open');
    return this.store;
  }

  // ---- driving the virtual loop ----

  /** Runs the virtual loop until `p` settles (or the power fails, or `maxMs` virtual ms pass). */
  private async drive<T>(p: Promise<T>, maxMs = 60_000, evenAfterCrash = false): Promise<Settled<T> | null> {
    let out: Settled<T> | null = null;
    p.then(
      (value) => (out = { ok: true, value }),
      (error: unknown) => (out = { ok: false, error }),
    );
    await this.loop.runUntil(() => out !== null || (!evenAfterCrash && this.fs.crashed), maxMs);
    return out;
  }

  private async advanceTime(): Promise<void> {
    const r = this.rand();
    const ms = r < 0.7 ? this.int(0, 3) : r < 0.95 ? this.int(3, 200) : r < 0.99 ? this.int(200, 5000) : this.int(10 * 60_000, 3 * 3_600_000);
    await this.loop.advance(ms, () => this.fs.crashed);
    if (this.fs.usedRatio() > 0.85) this.retention.forcedPossible = true;
  }

  // ---- run ----

  async run(): Promise<SimulationStats> {
    const prevTz = process.env.TZ;
    process.env.TZ = 'UTC'; // deleteWhen hours are local hours: pin them
    this.loop.install();
    this.loop.onUncaught = (e) => {
      // a dead disk makes anything throw; otherwise the broker process would have crashed
      if (!this.fs.crashed) this.lateFailure ??= new InvariantViolation(`uncaught exception in a timer callback (the process would exit): ${(e as Error)?.stack ?? e}`);
    };
    const onRejection = (reason: unknown): void => {
      if (!this.fs.crashed && !this.afterCrash) this.lateFailure ??= new InvariantViolation(`unhandled promise rejection (Node 20 exits): ${(reason as Error)?.stack ?? reason}`);
    };
    process.on('unhandledRejection', onRejection);
    try {
      await this.openStore(false);
      await this.checkRecovered('clean');
      const ops = this.operations();
      const total = ops.reduce((s, o) => s + o.weight, 0);
      for (this.opIndex = 0; this.opIndex < this.opts.ops; this.opIndex++) {
        let x = this.rand() * total;
        const op = ops.find((o) => (x -= o.weight) < 0) ?? ops[0]!;
        try {
          await op.run();
        } catch (e) {
          // the power failed under the operation: what it saw afterwards means nothing
          if (!this.fs.crashed) throw e;
        }
        this.throwLate();
        this.stats.ops++;
        this.noteIndexFailures();
        if (!this.fs.crashed) await this.advanceTime();
        this.noteIndexFailures();
        if (this.fs.crashed) await this.afterPowerLoss();
        if (this.faultOpsLeft > 0 && --this.faultOpsLeft === 0) this.faultsOff();
      }
      if (!this.fs.crashed) this.fs.crashAtOp = Infinity;
      if (this.fs.crashed) await this.afterPowerLoss();
      await this.cleanRestart();
      if (this.fs.crashed) await this.afterPowerLoss();
      await this.drive(this.live.shutdown());
      this.store = null;
    } catch (e) {
      throw new SimulationFailure(this.opts.seed, this.opIndex, e, [...this.trace]);
    } finally {
      process.off('unhandledRejection', onRejection);
      try {
        this.store?.closeAbruptly({ commitPending: false });
      } catch {
        // a dead file system may refuse even that
      }
      this.loop.uninstall();
      if (prevTz === undefined) delete process.env.TZ;
      else process.env.TZ = prevTz;
      this.stats.virtualMs = this.clock.nowMs() - START_MS;
      this.addFsStats();
    }
    return this.stats;
  }

  /** The operation table. */
  private operations(): Operation[] {
    const ops: Operation[] = [
      { name: 'put', weight: 50, run: () => this.put() },
      { name: 'batchPut', weight: 8, run: () => this.batchPut() },
      { name: 'pull', weight: 12, run: () => this.pull() },
      { name: 'query', weight: 4, run: () => this.query() },
      { name: 'lookup', weight: 4, run: () => this.lookup() },
      { name: 'wait', weight: 6, run: () => this.waitForPuts() },
      { name: 'deleteTopic', weight: 0.5, run: () => this.deleteTopic() },
      { name: 'manualDelete', weight: 0.7, run: () => this.manualDelete() },
      { name: 'setMaxMessageSize', weight: 0.3, run: () => this.setMaxMessageSize() },
      { name: 'cleanRestart', weight: 0.6, run: () => this.cleanRestart() },
      { name: 'processCrash', weight: 0.6, run: () => this.processCrash() },
      { name: 'powerLoss', weight: 1, run: async () => this.schedulePowerLoss() },
    ];
    if (this.withFaults) ops.push({ name: 'faults', weight: 1.5, run: async () => this.faultsOn() });
    return ops;
  }

  // ---- operations ----

  /**
   * A new model message (and the store's input for it). Bodies: 0..300 B (70 %), 300..3000 B
   * (20 %), near the limit (8 %), over it (2 %); for a batch member (`at` fixes the queue)
   * 80 / 17 / 2 / 1 %, so most batches fit a segment.
   */
  private newMessage(at?: { topic: Topic; queueId: number }): { m: SimMessage; msg: MessageInner } {
    const topic = at?.topic ?? this.pick(this.topics);
    const queueId = at?.queueId ?? this.int(0, topic.queues - 1);
    const max = this.maxBody;
    const r = this.rand();
    const [small, medium, nearMax] = at ? [0.8, 0.97, 0.99] : [0.7, 0.9, 0.98];
    const size = r < small ? this.int(0, 300) : r < medium ? this.int(300, 3000) : r < nearMax ? this.int(max - 64, max) : this.int(max + 1, max + 100);
    const body = Buffer.alloc(size);
    for (let i = 0; i < size; i += 4) {
      const word = (this.rand() * 0x1_0000_0000) >>> 0;
      for (let j = 0; j < 4 && i + j < size; j++) body[i + j] = (word >>> (8 * j)) & 0xff;
    }
    let keys: string | null = null;
    if (this.rand() < 0.6) {
      const n = this.rand() < 0.8 ? 1 : 2;
      const ks: string[] = [];
      for (let i = 0; i < n; i++) ks.push(this.pickKey());
      keys = [...new Set(ks)].join(' ');
    }
    const tags = this.rand() < 0.5 ? this.pick(['a', 'b', 'TagC']) : null;
    const m = this.model.add({ topic: topic.name, queueId, body, keys, tags });
    const properties = new Map<string, string>();
    if (tags !== null) properties.set('TAGS', tags);
    if (keys !== null) properties.set('KEYS', keys);
    properties.set(SIMID, String(m.id));
    const msg: MessageInner = {
      topic: topic.name,
      queueId,
      flag: 0,
      body,
      properties,
      sysFlag: 0,
      bornTimestamp: this.clock.nowMs(),
      bornHost: { ip: Buffer.from([127, 0, 0, 1]), port: 5000 },
      storeHost: { ip: Buffer.from([127, 0, 0, 1]), port: 10911 },
      reconsumeTimes: 0,
      preparedTransactionOffset: 0,
    };
    return { m, msg };
  }

  private pickKey(): string {
    const candidates = [...this.model.keyUses].filter(([, ids]) => ids.length < MAX_USES_PER_KEY);
    if (candidates.length > 0 && this.rand() < 0.6) return this.pick(candidates)[0];
    return `K${this.keyCounter++}`;
  }

  private async put(): Promise<void> {
    const { m, msg } = this.newMessage();
    const maxBody = this.maxBody;
    const sync = this.live.config.flushDiskType === 'SYNC_FLUSH';
    this.note(`put #${m.id} ${m.topic}/${m.queueId} ${m.body.length} B keys=${m.keys}`);
    this.stats.puts++;
    const inc = this.incarnation;
    const fs = this.fs;
    this.pendingPuts++;
    this.live.putMessage(msg).then(
      (r) => {
        if (inc !== this.incarnation) return; // answered by a store that is gone: unknown
        this.pendingPuts--;
        if (fs.crashed) return; // answered after the power failed: unknown
        this.onPutResult(m, r, m.body.length > maxBody, sync);
      },
      (e: unknown) => {
        if (inc === this.incarnation) this.pendingPuts--;
        this.lateFailure = new InvariantViolation(`putMessage threw (it must return a status): ${(e as Error)?.stack ?? e}`);
      },
    );
    // concurrent producers: sometimes let the put complete before the next operation
    if (this.rand() < 0.3) await this.waitForPuts();
  }

  /**
   * putMessages: 2..16 messages to one queue (bodies: newMessage, 1 % of them over the limit),
   * sometimes a block larger than a segment. The answer is all or nothing: an appendResult per
   * message (consecutive queue offsets, records back to back, one store timestamp) or none; a
   * refusal must be MESSAGE_ILLEGAL exactly when a body is oversize or the block cannot fit a
   * segment (or SERVICE_NOT_AVAILABLE when the store refuses everything). After a power loss a
   * batch that was not acknowledged may survive in part, like single puts.
   */
  private async batchPut(): Promise<void> {
    const topic = this.pick(this.topics);
    const queueId = this.int(0, topic.queues - 1);
    const n = this.int(2, 16);
    const items: Array<{ m: SimMessage; msg: MessageInner }> = [];
    for (let i = 0; i < n; i++) items.push(this.newMessage({ topic, queueId }));
    const maxBody = this.maxBody;
    const segment = Number(this.cfg.mappedFileSizeCommitLog);
    const anyOversize = items.some(({ m }) => m.body.length > maxBody);
    const blockBytes = items.reduce((a, { msg }) => a + encodeRecord(msg).length, 0);
    const tooBig = blockBytes + END_FILE_MIN_BLANK_LENGTH > segment || blockBytes > maxBody + RECORD_SIZE_SLACK_BYTES;
    const sync = this.live.config.flushDiskType === 'SYNC_FLUSH';
    this.note(`batchPut #${items[0]!.m.id}..#${items[n - 1]!.m.id} ${topic.name}/${queueId} n=${n} ${blockBytes} B${anyOversize ? ' (oversize body)' : ''}${tooBig ? ' (block > segment)' : ''}`);
    this.stats.puts += n;
    this.stats.batches++;
    const inc = this.incarnation;
    const fs = this.fs;
    this.pendingPuts++;
    this.live.putMessages(items.map((x) => x.msg)).then(
      (r) => {
        if (inc !== this.incarnation) return;
        this.pendingPuts--;
        if (fs.crashed) return;
        this.onBatchResult(items.map((x) => x.m), r, anyOversize || tooBig, sync);
      },
      (e: unknown) => {
        if (inc === this.incarnation) this.pendingPuts--;
        this.lateFailure = new InvariantViolation(`putMessages threw (it must return a status): ${(e as Error)?.stack ?? e}`);
      },
    );
    if (this.rand() < 0.3) await this.waitForPuts();
  }

  private onBatchResult(ms: SimMessage[], r: PutMessagesResult, mustRefuse: boolean, sync: boolean): void {
    const ids = `#${ms[0]!.id}..#${ms[ms.length - 1]!.id}`;
    const results = r.appendResults;
    if (!results) {
      if (r.status === 'PUT_OK') this.lateFailure = new InvariantViolation(`batch ${ids}: PUT_OK without appendResults`);
      else if (r.status !== 'SERVICE_NOT_AVAILABLE' && !(mustRefuse && r.status === 'MESSAGE_ILLEGAL')) {
        this.lateFailure = new InvariantViolation(`batch ${ids} refused with ${r.status}: ${r.remark}`);
      }
      for (const m of ms) {
        m.status = r.status;
        m.fate = 'refused';
      }
      this.stats.refused += ms.length;
      this.stats.batchesRefused++;
      return;
    }
    if (mustRefuse) this.lateFailure = new InvariantViolation(`batch ${ids} with an oversize body or block answered ${r.status}`);
    if (results.length !== ms.length) {
      this.lateFailure = new InvariantViolation(`batch ${ids}: ${results.length} appendResults for ${ms.length} messages`);
      return;
    }
    if (results[0]!.wroteOffset % Number(this.cfg.mappedFileSizeCommitLog) === 0) this.stats.batchesAtSegmentStart++;
    for (let i = 1; i < results.length; i++) {
      const a = results[i - 1]!;
      const b = results[i]!;
      if (b.queueOffset !== a.queueOffset + 1) this.lateFailure = new InvariantViolation(`batch ${ids}: queue offsets ${a.queueOffset}, ${b.queueOffset} not consecutive`);
      if (b.wroteOffset !== a.wroteOffset + a.wroteBytes) this.lateFailure = new InvariantViolation(`batch ${ids}: record at ${b.wroteOffset} does not follow ${a.wroteOffset}+${a.wroteBytes}`);
      if (b.storeTimestamp !== a.storeTimestamp) this.lateFailure = new InvariantViolation(`batch ${ids}: store timestamps ${a.storeTimestamp} and ${b.storeTimestamp} differ`);
    }
    for (let i = 0; i < ms.length; i++) this.onPutResult(ms[i]!, { status: r.status, remark: r.remark, appendResult: results[i]! } as PutMessageResult, false, sync);
  }

  /** Index dispatch failures of the current store seen so far, and the model's message count at the last checks (oldest first). */
  private indexFailures = { seen: 0, idsAt: [] as number[] };

  /**
   * When the store counted new index dispatch failures, the messages put during the last three
   * operations (dispatch may lag the put) may be missing from the index (by design).
   */
  private noteIndexFailures(): void {
    const store = this.store;
    if (!store || this.fs.crashed) return;
    const n = store.getDispatchStats().pluginFailures['index'] ?? 0;
    const ids = this.model.messages.length;
    if (n > this.indexFailures.seen) {
      for (let id = this.indexFailures.idsAt[0] ?? 0; id < ids; id++) this.model.messages[id]!.indexMayMiss = true;
      this.stats.indexFailures += n - this.indexFailures.seen;
      this.indexFailures.seen = n;
    }
    this.indexFailures.idsAt.push(ids);
    if (this.indexFailures.idsAt.length > 6) this.indexFailures.idsAt.shift(); // two checks per operation
  }

  private lateFailure: InvariantViolation | null = null;
  /** True while restarting after a power loss (the dead store's promises may still reject). */
  private afterCrash = false;

  private onPutResult(m: SimMessage, r: PutMessageResult, oversize: boolean, sync: boolean): void {
    m.status = r.status;
    if (oversize && r.status !== 'MESSAGE_ILLEGAL' && r.status !== 'SERVICE_NOT_AVAILABLE') this.lateFailure = new InvariantViolation(`message ${m.id} with an oversize body (${m.body.length} B) answered ${r.status}`);
    if (r.appendResult) {
      const a = r.appendResult;
      try {
        this.model.place(m, a.queueOffset, a.wroteOffset, a.wroteBytes, a.storeTimestamp);
      } catch (e) {
        this.lateFailure = new InvariantViolation((e as Error).message);
      }
      if (m.fate === 'pending') m.fate = 'written';
      if (r.status === 'PUT_OK') {
        m.putOk = true;
        this.stats.putOk++;
        // SYNC_FLUSH: on disk. ASYNC_FLUSH: PUT_OK is answered only once the record is in the page
        // cache (PutMessageService step 4), so it must survive a process crash
        m.fate = sync ? 'durable' : 'cached';
      }
    } else {
      m.fate = 'refused';
      this.stats.refused++;
      if (r.status === 'PUT_OK') this.lateFailure = new InvariantViolation(`message ${m.id}: PUT_OK without appendResult`);
      if (!oversize && r.status !== 'SERVICE_NOT_AVAILABLE') this.lateFailure = new InvariantViolation(`message ${m.id} (${m.body.length} B) refused with ${r.status}: ${r.remark}`);
    }
  }

  private throwLate(): void {
    if (this.lateFailure) throw this.lateFailure;
  }

  private async waitForPuts(): Promise<void> {
    await this.loop.runUntil(() => this.pendingPuts === 0 || this.fs.crashed, 30_000);
    this.throwLate();
  }

  private liveQueue(): { topic: string; queueId: number } {
    const t = this.pick(this.topics);
    return { topic: t.name, queueId: this.int(0, t.queues - 1) };
  }

  private async pull(): Promise<void> {
    const { topic, queueId } = this.liveQueue();
    const store = this.live;
    const min = store.getMinOffsetInQueue(topic, queueId);
    const max = store.getMaxOffsetInQueue(topic, queueId);
    const offset = Math.max(0, this.int(min - 2, max + 1));
    const n = this.int(1, 32);
    this.note(`pull ${topic}/${queueId} @${offset} n=${n} [${min},${max})`);
    this.stats.pulls++;
    const r = await this.drive(store.getMessage('sim', topic, queueId, offset, n));
    if (!r || this.fs.crashed) return;
    if (!r.ok) throw new InvariantViolation(`getMessage(${topic}, ${queueId}, ${offset}) threw: ${(r.error as Error)?.stack ?? r.error}`);
    checkPullResult(this.model, topic, queueId, r.value.messages, r.value.messageQueueOffsets);
    if (r.value.status === 'FOUND' && r.value.messageQueueOffsets[0] !== offset && offset >= min) {
      throw new InvariantViolation(`pull ${topic}/${queueId} at ${offset} (min ${min}) started at ${r.value.messageQueueOffsets[0]}`);
    }
    this.throwLate();
  }

  private async query(): Promise<void> {
    const keys = [...this.model.keyUses.keys()];
    if (keys.length === 0) return;
    const key = this.pick(keys);
    const some = this.model.messages[this.model.keyUses.get(key)![0]!]!;
    this.note(`query ${some.topic} key=${key}`);
    this.stats.queries++;
    const r = await this.drive(this.live.queryMessage(some.topic, key, 64, 0, Number.MAX_SAFE_INTEGER));
    if (!r || this.fs.crashed) return;
    if (!r.ok) throw new InvariantViolation(`queryMessage threw: ${(r.error as Error)?.stack ?? r.error}`);
    for (const raw of r.value.messages) {
      const m = identify(this.model, decodeRecord(raw), `queryMessage(${some.topic}, ${key})`);
      if (m.topic !== some.topic || !(m.keys ?? '').split(' ').includes(key)) throw new InvariantViolation(`queryMessage(${some.topic}, ${key}) returned message ${m.id} (keys ${m.keys})`);
    }
  }

  private async lookup(): Promise<void> {
    const store = this.live;
    const minPhy = store.getMinPhyOffset();
    const candidates = this.model.messages.filter((m) => (m.fate === 'durable' || m.fate === 'written' || m.fate === 'cached') && m.phyOffset !== null && m.phyOffset >= minPhy);
    if (candidates.length === 0) return;
    const m = this.pick(candidates);
    this.note(`lookup #${m.id} @${m.phyOffset}`);
    this.stats.lookups++;
    const r = await this.drive(store.lookMessageByOffset(m.phyOffset!));
    if (!r || this.fs.crashed) return;
    if (!r.ok) throw new InvariantViolation(`lookMessageByOffset(${m.phyOffset}) threw: ${(r.error as Error)?.stack ?? r.error}`);
    if (store.getMinPhyOffset() > m.phyOffset!) return; // retention got there meanwhile
    if (!r.value) throw new InvariantViolation(`lookMessageByOffset(${m.phyOffset}) found nothing for ${m.fate} message ${m.id} (CommitLog ${minPhy}..${store.getMaxPhyOffset()})`);
    const got = identify(this.model, r.value, `lookMessageByOffset(${m.phyOffset})`);
    if (got.id !== m.id) throw new InvariantViolation(`lookMessageByOffset(${m.phyOffset}) returned message ${got.id}, expected ${m.id}`);
  }

  private async deleteTopic(): Promise<void> {
    if (this.topics.length < 2) return;
    const i = this.int(0, this.topics.length - 1);
    const t = this.topics[i]!;
    this.note(`deleteTopics ${t.name}`);
    this.stats.topicDeletes++;
    this.topics.splice(i, 1);
    this.model.deletedTopics.add(t.name);
    this.addTopic();
    const r = await this.drive(this.live.deleteTopics([t.name]));
    if (r && !r.ok && !this.fs.crashed) throw new InvariantViolation(`deleteTopics threw: ${(r.error as Error)?.stack ?? r.error}`);
  }

  private async manualDelete(): Promise<void> {
    this.note('executeDeleteFilesManually');
    this.stats.manualDeletes++;
    const r = await this.drive(this.live.executeDeleteFilesManually(), 600_000);
    if (r && !r.ok && !this.fs.crashed) throw new InvariantViolation(`executeDeleteFilesManually threw: ${(r.error as Error)?.stack ?? r.error}`);
  }

  private async setMaxMessageSize(): Promise<void> {
    const segment = Number(this.cfg.mappedFileSizeCommitLog);
    const bytes = this.int(Math.floor(segment / 16), Math.floor(segment / 4));
    this.note(`setMaxMessageSize ${bytes}`);
    this.live.commitLog.setMaxMessageSize(bytes);
    this.maxBody = bytes;
  }

  private faultsOn(): void {
    const p = this.pick([0.01, 0.05, 0.2]);
    this.fs.faults = { pwriteEnospc: this.rand() < 0.5 ? p : 0, pwriteEio: this.rand() < 0.3 ? p : 0, fsyncEio: this.rand() < 0.6 ? p : 0 };
    this.faultOpsLeft = this.int(5, 60);
    this.stats.faultWindows++;
    this.note(`faults on for ${this.faultOpsLeft} ops: ${JSON.stringify(this.fs.faults)}`);
  }

  private faultsOff(): void {
    this.fs.faults = NO_FAULTS;
    this.faultOpsLeft = 0;
  }

  private schedulePowerLoss(): void {
    const inOps = this.int(1, 80);
    this.fs.crashAtOp = this.fs.stats.ioOps + inOps;
    this.note(`power loss scheduled in ${inOps} I/O operations`);
  }

  // ---- restarts ----

  private async cleanRestart(): Promise<void> {
    this.note('clean restart');
    this.faultsOff();
    await this.waitForPuts();
    if (this.fs.crashed) return;
    const r = await this.drive(this.live.shutdown(), 120_000);
    if (this.fs.crashed) return;
    if (!r) throw new InvariantViolation('shutdown did not complete within 120 s (virtual)');
    if (!r.ok) throw new InvariantViolation(`shutdown threw: ${(r.error as Error)?.stack ?? r.error}`);
    this.stats.cleanRestarts++;
    // A clean shutdown flushes everything, unless an fdatasync failed earlier (fsyncgate: the
    // store never syncs that file again and keeps the abort file): then what lies beyond the
    // flushed offset is only in the page cache, like data before a process crash.
    // Data the shutdown could not even hand to the page cache (its write failed, e.g. ENOSPC when
    // puts between two disk checks filled a tiny disk) is beyond the committed offset: it may be
    // gone (the fate stays `written`, the recovery decides).
    const flushed = this.live.getFlushedPhyOffset();
    const committed = this.live.commitLog.mfq.getCommittedWhere();
    for (const m of this.model.messages) {
      if (m.fate !== 'written' || m.phyOffset === null || m.sizeBytes === null) continue;
      const end = m.phyOffset + m.sizeBytes;
      if (end <= flushed) m.fate = 'durable';
      else if (end <= committed) m.fate = 'cached';
    }
    this.store = null;
    await this.nextIncarnation();
    this.maybeChangeConfig();
    await this.openStore(false);
    if (!this.fs.crashed) await this.checkRecovered('clean');
  }

  private async processCrash(): Promise<void> {
    this.note('process crash (page cache survives)');
    this.faultsOff();
    this.stats.processCrashes++;
    const store = this.live;
    store.closeAbruptly({ commitPending: false }); // a SIGKILL: bytes only the process held are gone
    this.store = null;
    await drainMicrotasks();
    this.throwLate();
    // what reached the page cache (a commit may fail with ENOSPC on a full disk: those bytes are lost)
    const committedEnd = Math.max(0, ...store.commitLog.mfq.getFiles().map((f) => f.fileFromOffset + f.getCommittedPosition()));
    for (const m of this.model.messages) {
      if (m.fate === 'written' && m.phyOffset !== null && m.sizeBytes !== null && m.phyOffset + m.sizeBytes <= committedEnd) m.fate = 'cached';
    }
    await this.nextIncarnation();
    this.maybeChangeConfig();
    await this.openStore(false);
    if (!this.fs.crashed) await this.checkRecovered('process-crash');
  }

  /** The power failed (CrashFileSystem.onCrash already applied the flushed-offset rule). */
  private async afterPowerLoss(): Promise<void> {
    this.afterCrash = true;
    try {
      await this.restartAfterPowerLoss();
    } finally {
      this.afterCrash = false;
    }
  }

  private async restartAfterPowerLoss(): Promise<void> {
    for (;;) {
      this.note('power lost: restarting on what reached the device');
      this.stats.powerLosses++;
      try {
        this.store?.closeAbruptly({ commitPending: false });
      } catch {
        // the dead file system refuses; the process is gone anyway
      }
      this.store = null;
      await drainMicrotasks();
      await this.nextIncarnation();
      this.addFsStats();
      this.fs = this.fs.restartAfterPowerLoss(mulberry32(this.int(0, 2 ** 31)));
      this.armCrashHook();
      // a reboot: the lock file names this pid but another boot, so the page cache is not trusted
      this.fs.replaceDurably(`${this.cfg.storePathRootDir}/lock`, Buffer.from(`pid=${process.pid}\nstartTime=\nbootId=sim-boot-${this.incarnation}\n`));
      this.maybeChangeConfig();
      if (this.rand() < 0.25) {
        this.fs.crashAtOp = this.fs.stats.ioOps + this.int(1, 40);
        this.note(`power loss scheduled during recovery in ${this.fs.crashAtOp - this.fs.stats.ioOps} I/O operations`);
      }
      await this.openStore(true);
      if (this.fs.crashed) {
        this.stats.crashesDuringRecovery++;
        continue;
      }
      this.fs.crashAtOp = Infinity;
      await this.checkRecovered('power-loss');
      if (this.fs.crashed) continue;
      return;
    }
  }

  /** Adds the current file system's counters to the run's (before it is replaced). */
  private addFsStats(): void {
    this.stats.injectedFaults += this.fs.stats.injectedFaults;
    this.stats.enospc += this.fs.stats.enospc;
    this.stats.ioOps += this.fs.stats.ioOps;
    this.stats.fsyncs += this.fs.stats.fsyncs;
  }

  private armCrashHook(): void {
    const fs = this.fs;
    fs.onCrash = () => {
      const store = this.store;
      if (!store) return;
      const flushed = store.getFlushedPhyOffset();
      for (const m of this.model.messages) {
        if (m.fate === 'written' && m.phyOffset !== null && m.sizeBytes !== null && m.phyOffset + m.sizeBytes <= flushed) m.fate = 'durable';
      }
    };
  }

  private async nextIncarnation(): Promise<void> {
    this.incarnation++;
    this.pendingPuts = 0;
    await drainMicrotasks(); // promise chains of the old store run out (they may arm timers)...
    const left = this.loop.pendingCount();
    if (left > 0) this.note(`${left} timers/immediates of the previous store dropped`);
    this.loop.reset(); // ...which die with its process
  }

  /** Restart-time configuration changes (what an operator may edit in broker.conf between runs). */
  private maybeChangeConfig(): void {
    if (this.rand() < 0.2) {
      this.cfg = { ...this.cfg, flushDiskType: this.cfg.flushDiskType === 'SYNC_FLUSH' ? 'ASYNC_FLUSH' : 'SYNC_FLUSH' };
      this.note(`config: flushDiskType=${this.cfg.flushDiskType}`);
    }
    if (this.rand() < 0.2) {
      this.cfg = { ...this.cfg, fileReservedTime: this.pick([0.02, 0.1, 0.5, 2]) };
      this.retention.minReservedMs = Math.min(this.retention.minReservedMs, this.reservedMs());
      this.note(`config: fileReservedTime=${this.cfg.fileReservedTime}`);
    }
  }

  /** Opens the store; a failed open is retried without faults (twice), a power failure during it is returned to the caller. */
  private async openStore(duringPowerLossRecovery: boolean): Promise<void> {
    if (!duringPowerLossRecovery) this.armCrashHook();
    for (let attempt = 0; ; attempt++) {
      // after a power failure the open fails on the dead disk; it is driven to its end so it
      // gives the in-process store lock back (a real crash ends the process and its lock)
      const r = await this.drive(DefaultMessageStore.open(this.cfg, this.deps()), 600_000, true);
      if (this.fs.crashed) {
        if (r?.ok) this.store = r.value;
        if (!r) throw new InvariantViolation('DefaultMessageStore.open on a dead disk did not settle within 600 s (virtual)');
        return;
      }
      if (!r) throw new InvariantViolation('DefaultMessageStore.open did not complete within 600 s (virtual)');
      if (r.ok) {
        this.store = r.value;
        this.maxBody = r.value.config.maxMessageSize;
        this.indexFailures.seen = 0;
        // failures during the recovery's re-dispatch: any message may be affected
        if ((r.value.getDispatchStats().pluginFailures['index'] ?? 0) > 0) this.indexFailures.idsAt = [0];
        this.noteIndexFailures();
        return;
      }
      if (attempt >= 2) throw new InvariantViolation(`DefaultMessageStore.open failed: ${(r.error as Error)?.stack ?? r.error}`);
      this.note(`open failed (${(r.error as Error)?.message}); retrying without faults`);
      this.faultsOff();
      if (attempt >= 1 && /disk full|ENOSPC/.test(String((r.error as Error)?.message))) {
        // the disk really is full (puts between two disk checks can fill a tiny disk): the store
        // refuses to start with a sentence saying so; the operator frees space
        this.fs.capacityBytes = Math.ceil(this.fs.capacityBytes * 1.25);
        this.note(`operator frees space: disk capacity now ${this.fs.capacityBytes} bytes`);
      }
    }
  }

  private async checkRecovered(when: RestartKind): Promise<void> {
    const store = this.live;
    this.note(`check after ${when}: recovery ${store.recoveryReport.mode}, CommitLog ${store.getMinPhyOffset()}..${store.getMaxPhyOffset()}`);
    const ctx: RetentionContext = { nowMs: this.clock.nowMs(), minReservedMs: this.retention.minReservedMs, forcedPossible: this.retention.forcedPossible };
    const r = await this.drive(checkRecoveredStore(store, this.model, when, ctx, Number(this.cfg.mappedFileSizeCommitLog)), 600_000);
    if (this.fs.crashed) return;
    if (!r) throw new InvariantViolation('recovery check did not complete');
    if (!r.ok) throw r.error;
    this.stats.recoveriesChecked++;
    this.stats.lostUnacked += r.value.lost;
    this.stats.expiredByRetention += r.value.expired;
    this.retention.minReservedMs = this.reservedMs();
    this.retention.forcedPossible = this.fs.usedRatio() > 0.85;
    // the store takes new puts after a restart (unless the disk is nearly full)
    if (this.fs.usedRatio() < 0.8) {
      const { m, msg } = this.newMessage();
      msg.body = msg.body.subarray(0, 100);
      m.body = msg.body;
      this.stats.puts++;
      this.note(`probe put #${m.id} ${m.topic}/${m.queueId}`);
      const expected = store.getMaxOffsetInQueue(m.topic, m.queueId);
      const p = await this.drive(store.putMessage(msg));
      if (this.fs.crashed) return;
      if (!p || !p.ok) throw new InvariantViolation(`probe put after ${when} did not answer: ${p && !p.ok ? p.error : 'timeout'}`);
      this.onPutResult(m, p.value, false, store.config.flushDiskType === 'SYNC_FLUSH');
      this.throwLate();
      if (p.value.status !== 'PUT_OK') throw new InvariantViolation(`probe put after ${when} answered ${p.value.status}: ${p.value.remark}`);
      if (p.value.appendResult!.queueOffset !== expected) {
        throw new InvariantViolation(`probe put after ${when} got queue offset ${p.value.appendResult!.queueOffset}, queue max was ${expected}`);
      }
    }
  }
}
