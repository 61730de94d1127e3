/**
 * Shared shapes of the benchmark harness: what a benchmark file exports, what it gets from the
 * runner, and what it returns. A result is a list of metrics, each optionally set beside a
 * same-run reference figure (baseline or peer) and a target, so the runner can print one table.
 */

export type BenchMode = 'quick' | 'full';

/** A number measured by an earlier benchmark of the same run, e.g. `disk.seqWrite1MiBMBps`. */
export type Figures = Record<string, number>;

export interface BenchContext {
  mode: BenchMode;
  /** A fresh directory on the disk under test, removed by the runner after the benchmark. */
  workDir: string;
  /** Absolute path of the repository checkout. */
  repoRoot: string;
  /** Figures of every benchmark that ran before this one, keyed `<bench>.<figure>`. */
  figures: Figures;
  /** Extra `--set key=value` options from the command line (strings; each bench parses its own). */
  options: Record<string, string>;
  /** Progress line on stderr, prefixed with the benchmark name. */
  log(message: string): void;
}

/** A target from the issue: `value op limit`, checked on the metric's value or on its ratio. */
export interface Target {
  op: '>=' | '<=';
  limit: number;
  on: 'value' | 'ratio';
}

export interface Metric {
  /** Short label, e.g. "append 1 KiB, ASYNC_FLUSH". */
  name: string;
  value: number | null;
  unit: string;
  /** Same-run reference: the figure key (`disk.fdatasyncP99Ms`) and its value. */
  reference?: { key: string; label: string; value: number; unit: string };
  /** value / reference.value, filled in by the runner when a reference is present. */
  ratio?: number;
  target?: Target;
  /** Filled in by the runner from the target. */
  met?: boolean;
  note?: string;
}

export interface BenchOutput {
  metrics: Metric[];
  /** Numbers later benchmarks of the same run may use as their reference. */
  figures?: Figures;
  /** Free-form observations (what was done, caveats), printed under the table. */
  notes?: string[];
  /** Raw data worth keeping in the JSON (histograms, per-size series...). */
  details?: unknown;
}

export interface Bench {
  /** `--only` name, e.g. `store-append`. */
  name: string;
  title: string;
  /** Benchmarks whose figures this one needs; the runner runs them first in the same run. */
  needs?: string[];
  /** Only in `--full` mode (e.g. the 16 GiB RSS run). */
  fullOnly?: boolean;
  run(ctx: BenchContext): Promise<BenchOutput>;
}

export interface BenchResult extends BenchOutput {
  name: string;
  title: string;
  startedAt: string;
  durationMs: number;
  /** Set when the benchmark could not run (missing API, tool...), with the reason. */
  skipped?: string;
  /** Set when it threw. */
  error?: string;
  /** 1-minute load average when it started (other work on the machine skews figures). */
  loadAvgAtStart?: number;
}

export interface MachineInfo {
  date: string;
  hostname: string;
  platform: string;
  kernel: string;
  cpuModel: string;
  cores: number;
  ramGiB: number;
  node: string;
  disk: string;
  gitCommit: string | null;
  /** 1-minute load average before the first benchmark (should be ~0 on an idle machine). */
  loadAvgAtStart: number;
}

export interface RunReport {
  mode: BenchMode;
  argv: string[];
  machine: MachineInfo;
  results: BenchResult[];
}

/** Thrown by a benchmark that cannot run here; the runner records it as skipped, not failed. */
export class BenchSkip extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'BenchSkip';
  }
}
