/**
 * `npm run bench:vs-apache`: Apache RocketMQ (5.3.3 by default; `--peer 4.9.7`) and tsmq, one after
 * the other in the same run, each driven by the same Java load generator JVMs (bench/vs-apache/java,
 * Apache rocketmq-client 4.9.8). Apache first, so that tsmq's warm-up of each phase can be made as
 * long as Apache's was (Apache's ends when its JIT is done; see phases.ts).
 *
 * Phases (`--mode`): single (sync send), batch (send(Collection) of `--batch`), sync-flush (single on
 * brokers with flushDiskType=SYNC_FLUSH), consume (a push consumer, then a lite pull consumer, over the
 * same preloaded set), all (every one, in that order). `--scaling`: single with the broker on 1 core
 * and on every core, for both systems, and the scaling ratio.
 *
 * Output: one table on stdout, bench/results/vs-apache-<peer>[-scaling]-<date>.{md,json} and the
 * summary bench/results/vs-apache.md. Every process started here is stopped and every temp dir
 * removed, also on failure or Ctrl-C. Flags: see `usage()` and bench/README.md.
 * Env: TSMQ_BROKER_NODE_ARGS (space-separated node flags for the tsmq broker, e.g.
 *      `--cpu-prof --cpu-prof-dir=/tmp/prof`; the profile is written at the broker's clean exit).
 *      TSMQ_BROKER_CONF (space-separated key=value broker/store keys for the tsmq broker, for A/B
 *      runs, e.g. `commitCommitLogAsync=true`).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus as osCpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { warmPageCache } from '../lib/disk-ops.js';
import { machineInfo } from '../lib/os.js';
import { GiB } from '../lib/stats.js';
import { GeneratorGroup, LOADGEN_JVM } from './generators.js';
import { mavenBuild } from './maven.js';
import { apacheJvmFlags, startApache, startTsmq, type FlushDiskType, type Running } from './peers.js';
import { consumePhases, producePhase, type PhaseEnv, type PhaseResult } from './phases.js';
import { fillPageCache, type PageCacheFill } from '../lib/page-cache.js';
import { installCleanup, removeDir, tempDir } from './procs.js';
import { buildTable } from './report.js';
import { compactTrace, DEFAULT_STEADY, JIT_QUIET_SHARE, JIT_WINDOW_SECONDS } from './warmup.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, '..', '..');
const JAVA_DIR = join(HERE, 'java');
const SERVER_POM_DIR = join(JAVA_DIR, 'apache-server');
const CLIENT_VERSION = '4.9.8';
const PEERS = ['5.3.3', '4.9.7'];
const MODES = ['single', 'batch', 'sync-flush', 'consume', 'all'] as const;
type Mode = (typeof MODES)[number];

interface Opts {
  peer: string; mode: Mode; batch: number; seconds: number; warmup: number; warmupMax: number; steadyInterval: number; steadyWindows: number; steadyTolerancePct: number; threads: number; generators: number;
  size: number; queues: number; consumeMessages: number; consumers: number; pullBatch: number; consumeBatch: number; queueThreshold: number; brokerCpus: string | null; clientCpus: string | null; scaling: boolean; rawConsumer: boolean; rawProducer: boolean;
  brokerHeap: string; namesrvHeap: string; dir: string; only: 'apache' | 'tsmq' | null; tsmqRoot: string; tsmqTsx: boolean; report: boolean; fill: boolean;
}

function usage(): string {
  return `usage: npm run bench:vs-apache -- [flags]
  --peer 5.3.3|4.9.7     Apache version (5.3.3)
  --mode single|batch|sync-flush|consume|all (all)
  --batch N              messages per send(Collection) in batch mode (32)
  --seconds N            measured window of each produce phase (30)
  --warmup N             minimum warm-up per phase, s (60); Apache's ends when its broker JIT < ${JIT_QUIET_SHARE * 100} % CPU over ${JIT_WINDOW_SECONDS} s
  --warmup-max N         cap of a warm-up, s (240); a warm-up also lasts until its throughput is steady:
  --steady-interval N    trace interval of a produce warm-up, s (${DEFAULT_STEADY.intervalSeconds})
  --steady-windows N     the last N intervals (consume: cycles per consumer kind) must agree (${DEFAULT_STEADY.windows})
  --steady-tolerance P   ... each within ±P % of their mean, rise across them < P/2 % (${DEFAULT_STEADY.tolerance * 100})
  --threads N            sender threads per generator JVM (32)
  --generators N         load generator JVMs (1)
  --consume-messages N   the preloaded set every consumer reads (1000000)
  --consumers N          consumer JVMs in the consume phases, one consumer group each (2)
  --pull-batch N         pullBatchSize of both consumers (32; both brokers cap a pull at 32 in memory)
  --consume-batch N      the push consumer's consumeMessageBatchMaxSize (1, the client's default)
  --queue-threshold N    pullThresholdForQueue of both consumers (1000, the client's default)
  --raw-consumer         consume mode: also a "consume raw pull" phase (PULL_MESSAGE through the Java client's
                         remoting layer, records walked, not decoded: broker-bound on a small machine)
  --raw-producer         single mode: also a "single raw" phase (SEND_MESSAGE_V2 built by hand and sent through the
                         Java client's remoting layer, no producer logic: broker-bound on a small machine)
  --broker-cpus LIST     taskset CPU list for broker + namesrv (e.g. 0)
  --client-cpus LIST     taskset CPU list for the generator JVMs (e.g. 1)
  --scaling              single with the broker on 1 core, then on all cores, both systems
  --size BYTES (1024) --queues N (8) --broker-heap 8g --namesrv-heap 4g (Apache's runbroker.sh / runserver.sh)
  --no-fill              do not fill the page cache before each broker start (bench/lib/page-cache.ts); write and
                         delete 2 GiB instead, as before 2026-12-02 (for A/B runs of the warm-up)
  --tsmq-tsx             run tsmq's src/ through tsx (before 2026-12-02) instead of its built dist/ (what
                         \`npm start\` runs; the root's dist/ is brought up to date first)
  --dir PATH (os.tmpdir()) --only apache|tsmq --tsmq-root DIR --no-report`;
}

function parseArgs(argv: string[]): Opts {
  const o: Opts = {
    peer: '5.3.3', mode: 'all', batch: 32, seconds: 30, warmup: 60, warmupMax: 240, steadyInterval: DEFAULT_STEADY.intervalSeconds, steadyWindows: DEFAULT_STEADY.windows, steadyTolerancePct: DEFAULT_STEADY.tolerance * 100, threads: 32, generators: 1, size: 1024, queues: 8, consumeMessages: 1_000_000, consumers: 2, pullBatch: 32, consumeBatch: 1, queueThreshold: 1000,
    brokerCpus: null, clientCpus: null, scaling: false, rawConsumer: false, rawProducer: false, brokerHeap: '8g', namesrvHeap: '4g', dir: tmpdir(), only: null, tsmqRoot: REPO, tsmqTsx: false, report: true, fill: true,
  };
  const ints = { '--batch': 'batch', '--seconds': 'seconds', '--warmup': 'warmup', '--warmup-max': 'warmupMax', '--steady-interval': 'steadyInterval', '--steady-windows': 'steadyWindows', '--steady-tolerance': 'steadyTolerancePct', '--threads': 'threads', '--generators': 'generators', '--size': 'size', '--queues': 'queues', '--consume-messages': 'consumeMessages', '--consumers': 'consumers', '--pull-batch': 'pullBatch', '--consume-batch': 'consumeBatch', '--queue-threshold': 'queueThreshold' } as const;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = (): string => {
      const x = argv[++i];
      if (x === undefined) throw new Error(`${a} needs a value\n${usage()}`);
      return x;
    };
    if (a in ints) {
      const n = Number(v());
      if (!Number.isInteger(n) || n < 0) throw new Error(`${a} must be a non-negative integer`);
      o[ints[a as keyof typeof ints]] = n;
    } else if (a === '--peer') o.peer = v();
    else if (a === '--mode') o.mode = v() as Mode;
    else if (a === '--broker-cpus') o.brokerCpus = v();
    else if (a === '--client-cpus') o.clientCpus = v();
    else if (a === '--scaling') o.scaling = true;
    else if (a === '--broker-heap') o.brokerHeap = v();
    else if (a === '--namesrv-heap') o.namesrvHeap = v();
    else if (a === '--dir') o.dir = v();
    else if (a === '--only') o.only = v() as 'apache' | 'tsmq';
    else if (a === '--tsmq-root') o.tsmqRoot = v();
    else if (a === '--no-report') o.report = false;
    else if (a === '--tsmq-tsx') o.tsmqTsx = true;
    else if (a === '--no-fill') o.fill = false;
    else if (a === '--raw-consumer') o.rawConsumer = true;
    else if (a === '--raw-producer') o.rawProducer = true;
    else if (a === '--help' || a === '-h') {
      console.log(usage());
      process.exit(0);
    } else throw new Error(`unknown flag ${a}\n${usage()}`);
  }
  if (!PEERS.includes(o.peer)) throw new Error(`--peer must be one of ${PEERS.join(', ')}`);
  if (!MODES.includes(o.mode)) throw new Error(`--mode must be one of ${MODES.join(', ')}`);
  if (o.only !== null && o.only !== 'apache' && o.only !== 'tsmq') throw new Error('--only must be apache or tsmq');
  if (o.generators < 1 || o.threads < 1 || o.batch < 1 || o.seconds < 1 || o.consumers < 1 || o.pullBatch < 1 || o.consumeBatch < 1 || o.queueThreshold < 1) {
    throw new Error('--generators, --threads, --batch, --seconds, --consumers, --pull-batch, --consume-batch and --queue-threshold must be ≥ 1');
  }
  if (o.steadyInterval < 1 || o.steadyWindows < 2 || o.steadyTolerancePct < 1) throw new Error('--steady-interval must be ≥ 1, --steady-windows ≥ 2, --steady-tolerance ≥ 1');
  o.warmupMax = Math.max(o.warmupMax, o.warmup);
  for (const c of [o.brokerCpus, o.clientCpus]) if (c !== null) cpuCount(c);
  return o;
}

/** Number of CPUs in a taskset list ("0", "0,1", "0-3"). */
function cpuCount(list: string): number {
  let n = 0;
  for (const part of list.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw new Error(`bad CPU list ${list}`);
    n += m[2] === undefined ? 1 : Number(m[2]) - Number(m[1]) + 1;
  }
  return n;
}

/** One broker start (a flush type and CPU placement) and the phases run against it. */
interface BrokerConfig { flush: FlushDiskType; brokerCpus: string | null; clientCpus: string | null; phases: Array<{ kind: 'single' | 'single-raw' | 'batch' | 'sync-flush' | 'consume'; name: string }> }

function plan(o: Opts): BrokerConfig[] {
  const machine = osCpus().length;
  if (o.scaling) {
    const all = machine > 1 ? `0-${machine - 1}` : '0';
    return [
      { flush: 'ASYNC_FLUSH', brokerCpus: '0', clientCpus: o.clientCpus ?? (machine > 1 ? `1-${machine - 1}` : '0'), phases: [{ kind: 'single', name: 'single (broker 1 core)' }] },
      { flush: 'ASYNC_FLUSH', brokerCpus: all, clientCpus: o.clientCpus ?? all, phases: [{ kind: 'single', name: `single (broker ${machine} cores)` }] },
    ];
  }
  const want = (m: Mode): boolean => o.mode === 'all' || o.mode === m;
  const asyncPhases = [
    ...(want('single') ? [{ kind: 'single' as const, name: 'single' }] : []),
    ...(want('single') && o.rawProducer ? [{ kind: 'single-raw' as const, name: 'single raw' }] : []),
    ...(want('batch') ? [{ kind: 'batch' as const, name: 'batch' }] : []),
    ...(want('consume') ? [{ kind: 'consume' as const, name: 'consume push' }] : []),
  ];
  const cfgs: BrokerConfig[] = [];
  if (asyncPhases.length > 0) cfgs.push({ flush: 'ASYNC_FLUSH', brokerCpus: o.brokerCpus, clientCpus: o.clientCpus, phases: asyncPhases });
  if (want('sync-flush')) cfgs.push({ flush: 'SYNC_FLUSH', brokerCpus: o.brokerCpus, clientCpus: o.clientCpus, phases: [{ kind: 'sync-flush', name: 'sync-flush' }] });
  return cfgs;
}

function phaseNames(cfgs: BrokerConfig[], rawConsumer: boolean): string[] {
  const consume = rawConsumer ? ['consume push', 'consume lite pull', 'consume raw pull'] : ['consume push', 'consume lite pull'];
  return cfgs.flatMap((c) => c.phases.flatMap((p) => (p.kind === 'consume' ? consume : [p.name])));
}

async function main(): Promise<void> {
  installCleanup();
  const o = parseArgs(process.argv.slice(2));
  const started = new Date();
  const t0 = Date.now();
  const machineCores = osCpus().length;
  const cfgs = plan(o);
  const apacheLabel = `Apache ${o.peer}`;
  console.log(`vs-apache: ${apacheLabel} vs tsmq; ${o.scaling ? 'scaling (single, broker on 1 core / all cores)' : `mode ${o.mode}`}; ${o.generators} generator JVM(s) × ${o.threads} threads, ${o.size} B, ${o.queues} queues, batch ${o.batch}; warm-up ≥ ${o.warmup} s until steady (last ${o.steadyWindows} × ${o.steadyInterval} s within ±${o.steadyTolerancePct} %; cap ${o.warmupMax} s) + ${o.seconds} s; consume set ${o.consumeMessages} × ${o.consumers} consumer JVM(s) (pullBatchSize ${o.pullBatch}, consumeMessageBatchMaxSize ${o.consumeBatch}, pullThresholdForQueue ${o.queueThreshold}); broker cpus ${o.brokerCpus ?? 'any'}, client cpus ${o.clientCpus ?? 'any'}; data under ${o.dir}; load average ${loadavg()[0]!.toFixed(2)}`);
  console.log(`building Java (load generator: rocketmq-client ${CLIENT_VERSION}; Apache server ${o.peer}) ...`);
  const lgDir = mavenBuild('loadgen', JAVA_DIR, [join(JAVA_DIR, 'pom.xml'), join(JAVA_DIR, 'src')], ['compile', 'dependency:copy-dependencies']);
  const srvDir = mavenBuild(`apache-server-${o.peer}`, SERVER_POM_DIR, [join(SERVER_POM_DIR, 'pom.xml')], ['dependency:copy-dependencies'], { 'rocketmq.server.version': o.peer });
  const lgCp = `${join(lgDir, 'classes')}:${join(lgDir, 'lib', '*')}`;
  const srvLib = join(srvDir, 'lib');

  const results: Record<'apache' | 'tsmq', Record<string, PhaseResult>> = { apache: {}, tsmq: {} };
  const described: Record<string, string[]> = { apache: [], tsmq: [] };
  const failures: Record<string, string> = {};
  const fills: Array<{ system: string; flush: string } & PageCacheFill> = [];
  const systems = (['apache', 'tsmq'] as const).filter((s) => !o.only || o.only === s);
  const tag = `Va${Date.now().toString(36)}`;
  for (const system of systems) {
    for (const cfg of cfgs) {
      let sys: Running | null = null;
      let gens: GeneratorGroup | null = null;
      const warm = tempDir(o.dir, 'tsmq-vs-apache-warm-');
      try {
        if (o.fill) {
          // the broker starts with the page cache full of clean, host-backed pages (bench/lib/page-cache.ts); kept until it stopped
          const f = await fillPageCache(warm);
          console.log(`page cache filled: ${(f.bytes / GiB).toFixed(1)} GiB in ${f.seconds} s (MemFree ${(f.freeBefore / GiB).toFixed(1)} → ${(f.freeAfter / GiB).toFixed(1)} GiB)`);
          fills.push({ system, flush: cfg.flush, ...f });
        } else {
          warmPageCache(warm, 2 * GiB); // the earlier 2 GiB warm-up: its pages are free again when the broker writes
          removeDir(warm);
        }
        console.log(`starting ${system} (${cfg.flush}${cfg.brokerCpus ? `, broker cpus ${cfg.brokerCpus}` : ''}) ...`);
        const peerOpts = { dir: o.dir, flush: cfg.flush, cpus: cfg.brokerCpus, repo: REPO };
        sys = system === 'apache'
          ? await startApache({ ...peerOpts, version: o.peer, classpath: join(srvLib, '*'), libDir: srvLib, brokerHeap: o.brokerHeap, namesrvHeap: o.namesrvHeap })
          : await startTsmq({ ...peerOpts, root: o.tsmqRoot, tsx: o.tsmqTsx });
        console.log(`  ${sys.describe}`);
        described[system]!.push(sys.describe);
        gens = await GeneratorGroup.start(o.generators, lgCp, sys.namesrv, cfg.clientCpus, REPO, system);
        for (const ph of cfg.phases) {
          // tsmq warms up as long as Apache did for the same phase (Apache runs first)
          const apacheWarm = system === 'tsmq' ? results.apache[ph.name]?.warmup.seconds ?? 0 : 0;
          const minWarm = Math.max(o.warmup, Math.ceil(apacheWarm));
          const env: PhaseEnv = {
            sys, gens, brokerCores: cfg.brokerCpus ? cpuCount(cfg.brokerCpus) : machineCores, generatorCores: cfg.clientCpus ? cpuCount(cfg.clientCpus) : machineCores,
            machineCores, minWarmupSeconds: minWarm, maxWarmupSeconds: Math.max(minWarm, o.warmupMax), log: (s) => console.log(s),
            brokerCpus: cfg.brokerCpus,
            steady: { intervalSeconds: o.steadyInterval, windows: o.steadyWindows, tolerance: o.steadyTolerancePct / 100 },
          };
          try {
            if (ph.kind === 'consume') {
              // the consumers are JVMs of their own (CPU counted for them alone); the first generator preloads
              const consumers = await GeneratorGroup.start(o.consumers, lgCp, sys.namesrv, cfg.clientCpus, REPO, `${system} (consumer)`);
              try {
                const load = { messages: o.consumeMessages, size: o.size, queues: o.queues, timeoutSeconds: Math.max(300, o.seconds * 10), tag: `${tag}${system}`, pullBatch: o.pullBatch, consumeBatch: o.consumeBatch, queueThreshold: o.queueThreshold, raw: o.rawConsumer };
                for (const r of await consumePhases({ ...env, gens: consumers }, gens.gens[0]!, load)) results[system][r.phase] = r;
              } finally {
                await consumers.stop();
              }
            } else {
              const mode = ph.kind === 'batch' ? 'batch' : ph.kind === 'single-raw' ? 'raw' : 'single';
              const topic = `${tag}${ph.kind === 'batch' ? 'Batch' : ph.kind === 'single-raw' ? 'SingleRaw' : 'Single'}`;
              results[system][ph.name] = await producePhase(env, { phase: ph.name, mode, threads: o.threads, batch: o.batch, size: o.size, queues: o.queues, seconds: o.seconds, topic });
            }
          } catch (e) {
            failures[`${system} ${ph.name}`] = (e as Error).message;
            console.error(`${system} ${ph.name} failed: ${(e as Error).message}`);
            break; // the generators may be stuck mid-command: next broker config
          }
        }
      } catch (e) {
        failures[`${system} ${cfg.flush}`] = (e as Error).message;
        console.error(`${system} (${cfg.flush}) failed: ${(e as Error).message}`);
      } finally {
        if (gens) await gens.stop();
        if (sys) await sys.stop();
        removeDir(warm);
      }
    }
  }

  const phases = phaseNames(cfgs, o.rawConsumer);
  const table = buildTable(apacheLabel, phases, results.apache, results.tsmq);
  const scaling = o.scaling ? scalingOf(phases, results) : null;
  const elapsedMin = (Date.now() - t0) / 60_000;
  console.log('');
  console.log(table.text);
  if (scaling) for (const s of scaling.lines) console.log(s);
  console.log(`\n${elapsedMin.toFixed(1)} min in all; load average now ${loadavg()[0]!.toFixed(2)}`);
  if (!o.report) {
    console.log(`RESULT ${JSON.stringify({ tsmqRoot: o.tsmqRoot, pageCacheFills: fills, results, failures })}`);
  } else {
    writeReport(o, started, elapsedMin, srvLib, described, results, failures, table, scaling, fills);
  }
  if (Object.keys(failures).length > 0) process.exitCode = 1;
}

/** One line per system and warm-up: its msgs/s trace and how it ended (consume phases share one warm-up). */
function warmupLines(results: Record<'apache' | 'tsmq', Record<string, PhaseResult>>): string[] {
  const out: string[] = [];
  for (const [system, m] of Object.entries(results)) {
    const seen = new Set<unknown>();
    for (const r of Object.values(m)) {
      if (seen.has(r.warmup)) continue;
      seen.add(r.warmup);
      const w = r.warmup;
      const end = w.settled ? 'steady' : `cap: ${[...(w.jitQuiet ? [] : ['JIT busy']), ...(w.steady ? [] : ['not steady'])].join(', ')}`;
      out.push(`- ${system} ${r.phase.startsWith('consume') ? 'consume' : r.phase} (${w.seconds} s, ${end}): ${compactTrace(w.trace.rows)}`);
    }
  }
  return out;
}

function scalingOf(phases: string[], results: Record<'apache' | 'tsmq', Record<string, PhaseResult>>): { lines: string[]; ratios: Record<string, number | null> } {
  const [one, all] = phases;
  const ratios: Record<string, number | null> = {};
  const lines: string[] = ['', `scaling (msgs/s ${all} ÷ ${one}):`];
  for (const s of ['apache', 'tsmq'] as const) {
    const a = results[s][one!];
    const b = results[s][all!];
    ratios[s] = a && b ? Math.round((b.msgsPerSec / a.msgsPerSec) * 100) / 100 : null;
    lines.push(`  ${s}: ${ratios[s] ?? 'n/a'}${a && b ? ` (${Math.round(a.msgsPerSec)} → ${Math.round(b.msgsPerSec)} msgs/s)` : ''}`);
  }
  return { lines, ratios };
}

function machineCoresOf(): number {
  return osCpus().length;
}

function javaVersion(): string {
  const r = spawnSync('java', ['-version'], { encoding: 'utf8' });
  return (r.stderr || r.stdout).trim().split('\n').join('; ');
}

function writeReport(
  o: Opts, started: Date, elapsedMin: number, srvLib: string, described: Record<string, string[]>,
  results: Record<'apache' | 'tsmq', Record<string, PhaseResult>>, failures: Record<string, string>,
  table: ReturnType<typeof buildTable>, scaling: ReturnType<typeof scalingOf> | null, fills: Array<{ system: string; flush: string } & PageCacheFill>,
): void {
  const resultsDir = join(REPO, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const stamp = started.toISOString().slice(0, 16).replace(/[:T]/g, (c) => (c === 'T' ? '-' : ''));
  const base = `vs-apache-${o.peer}${o.scaling ? '-scaling' : ''}-${stamp}`;
  const jvm = apacheJvmFlags(o.peer, o.brokerHeap, o.namesrvHeap, '<home>');
  const machine = machineInfo(REPO, o.dir);
  const java = javaVersion();
  writeFileSync(
    join(resultsDir, `${base}.json`),
    JSON.stringify({ kind: 'vs-apache', startedAt: started.toISOString(), elapsedMinutes: Math.round(elapsedMin * 10) / 10, options: o, apacheServerVersion: o.peer, clientVersion: CLIENT_VERSION, java, machine, jvm: { ...jvm, loadgen: LOADGEN_JVM }, systems: described, pageCacheFills: fills, results, failures, table: table.rows, targets: table.targets, scaling: scaling?.ratios ?? null }, null, 2) + '\n',
  );
  const met = table.targets.filter((t) => t.met === true).length;
  const all = Object.values(results).flatMap((m) => Object.values(m));
  const otherOf = (l: PhaseResult[]): number => (l.length ? l.reduce((s, r) => s + r.cpu.otherCoresUsed, 0) / l.length : 0);
  const otherCores = otherOf(all);
  const otherBy = (['apache', 'tsmq'] as const).filter((k) => Object.keys(results[k]).length > 0).map((k) => `${k} ${otherOf(Object.values(results[k])).toFixed(2)}`).join(', ');
  const caveats = [
    ...(o.seconds < 30 || o.warmup < 60 ? [`**Smoke run** (${o.seconds} s windows, ≥ ${o.warmup} s warm-ups${o.consumeMessages < 1_000_000 ? `, ${o.consumeMessages} consumed` : ''}): checks the harness, not a comparison.`] : []),
    ...(otherCores >= 0.25 ? [`**Busy machine**: other processes used on average ${otherCores.toFixed(2)} of ${machineCoresOf()} cores during the measured windows (${otherBy}); the figures are noisy, and unfair to the side with the busier windows.`] : []),
    ...(all.some((r) => !r.warmup.jitQuiet) ? ['Some Apache warm-ups hit the cap before the JIT was quiet ("JIT busy at cap" in the warm-up row).'] : []),
    ...(all.some((r) => !r.warmup.steady) ? ['Some warm-ups hit the cap before the throughput was steady ("not steady at cap" in the warm-up row; their traces are below).'] : []),
  ];
  const md = [
    `# tsmq vs Apache RocketMQ ${o.peer} (${started.toISOString()})`, '',
    `Same run, Apache first, then tsmq; the same load generator JVMs (Apache rocketmq-client ${CLIENT_VERSION}): ${o.generators} JVM(s) × ${o.threads} sender threads, ${o.size} B bodies, topics with ${o.queues} queues.`,
    `Each phase: a warm-up of at least ${o.warmup} s that, for Apache, lasts until the broker JVM's JIT compiler threads used < ${JIT_QUIET_SHARE * 100} % CPU over the last ${JIT_WINDOW_SECONDS} s and, for both systems, until the throughput is steady: the last ${o.steadyWindows} intervals of ${o.steadyInterval} s (consume: the last ${o.steadyWindows} warm-up cycles of each consumer kind) each within ±${o.steadyTolerancePct} % of their mean, with a least-squares rise across them below ${o.steadyTolerancePct / 2} % (cap ${o.warmupMax} s); tsmq's warm-up is at least as long as Apache's for the same phase. Warm-up traces (msgs/s per interval) under "Warm-ups"; per-interval CPU by thread class, /proc/stat, Dirty/Writeback and broker RSS in the JSON (\`warmup.trace\`).`,
    `Produce phases: ${o.seconds} s measured, latency per send call (batch: one send(Collection) of ${o.batch}${o.rawProducer ? '; single raw: SEND_MESSAGE_V2 requests built by the load generator (producer group, queue round robin, TAGS, a new UNIQ_KEY, WAIT=true) and sent with invokeSync through the Java client\'s remoting layer, without DefaultMQProducer\'s per-send work, so the broker bounds the phase' : ''}). Consume phases: ${o.consumeMessages} messages preloaded with async single sends (round robin, so queues interleave), then ${o.consumers} consumer JVM(s) (not the producer's), each on a new consumer group of its own, read the whole set (fan-out: the broker serves it ${o.consumers}×), first with a DefaultMQPushConsumer, then with a DefaultLitePullConsumer${o.rawConsumer ? ', then (consume raw pull) with PULL_MESSAGE requests sent through the client\'s remoting layer, one of pullBatchSize in flight per queue, the records of each reply walked (TOTALSIZE, QUEUEID, QUEUEOFFSET) and not decoded, so the broker bounds the phase' : ''}; both with pullBatchSize ${o.pullBatch} and pullThresholdForQueue ${o.queueThreshold}, the push consumer with consumeMessageBatchMaxSize ${o.consumeBatch}; msgs/s = distinct messages over all consumers from the first delivered message to the last distinct one; the consume warm-up reads a 100 000-message topic with new groups over and over by the same rules.`,
    `CPU: broker = utime+stime of ${o.peer} broker + namesrv JVMs / tsmq's process tree, generator = the load generator JVMs (consume phases: the consumer JVMs), over each measured window; "cores used" = CPU-s ÷ wall s (consume phases: ÷ the seconds from the first delivered message to the last new one, the msgs/s denominator); bottleneck: the side ≥ 90 % of its cores (tsmq's JavaScript thread: 1 core).`,
    `Stores in temp dirs under ${o.dir}; loopback. Broker cpus ${o.brokerCpus ?? 'any'}, generator cpus ${o.clientCpus ?? 'any'}${o.scaling ? ' (scaling run: see phase names)' : ''}. Took ${elapsedMin.toFixed(1)} min. Targets met: ${met} of ${table.targets.length}.`, '',
    ...caveats.map((c) => `> ${c}\n`),
    table.md, '',
    ...(scaling ? ['```', ...scaling.lines.filter(Boolean), '```', ''] : []),
    '## Warm-ups', '',
    `msgs/s per warm-up interval (k = 1000; consume: per cycle, with the consumer kind), and how the warm-up ended:`, '',
    ...warmupLines(results), '',
    '## Setup', '',
    `- Machine: ${machine.cores} × ${machine.cpuModel}, ${machine.ramGiB} GiB, kernel ${machine.kernel}, ${machine.disk}; load average at start ${machine.loadAvgAtStart} (shared machine); node ${machine.node}; tsmq commit ${machine.gitCommit}.`,
    `- Java: ${java}.`,
    o.fill
      ? `- Page cache before each broker start (bench/lib/page-cache.ts): a sparse file as large as MemFree read into the page cache and kept until the broker stopped, so that the broker's writes reuse host-backed pages from the start: ${fills.map((f) => `${f.system} ${f.flush} ${(f.bytes / GiB).toFixed(1)} GiB in ${f.seconds} s`).join(', ')}.`
      : '- Page cache before each broker start: 2 GiB written and deleted (`--no-fill`; the broker pays the VM\'s first-touch cost for new page-cache pages until the free memory is used up).',
    `- Apache ${o.peer}: rocketmq-namesrv / rocketmq-broker ${o.peer} from Maven Central; broker.conf: ASYNC_MASTER, flushDiskType ASYNC_FLUSH (sync-flush phase: SYNC_FLUSH), autoCreateTopicEnable=true, otherwise defaults${o.peer.startsWith('4.') ? '; logging: WARN to stderr' : `; logging: the shipped rmq.broker.logback.xml / rmq.namesrv.logback.xml (-Drmq.logback.configurationFile)`}.`,
    `- JVM namesrv (runserver.sh): \`${jvm.namesrv.join(' ')}\``,
    `- JVM broker (runbroker.sh): \`${jvm.broker.join(' ')}\``,
    `- Both Apache JVMs also get \`--add-opens\` for java.nio, sun.nio.ch, jdk.internal.ref, java.lang, java.util (JDK 17) and \`-Duser.home=<temp home>\`.`,
    `- JVM load generator: \`${LOADGEN_JVM.join(' ')}\`.`,
    `- tsmq: \`${o.tsmqTsx ? 'tsx src/cli/main.ts' : 'node dist/cli/main.js'} start -n <port> -p <port> --store <tmp> -o grpcListenPort=-1 -o flushDiskType=<…>\`, TSMQ_LOG_LEVEL=warn${o.tsmqTsx ? ' (the sources through tsx, `--tsmq-tsx`)' : ' (the tsc build npm start runs, brought up to date first)'}.`,
    `- Server jars: ${srvLib}.`,
    ...Object.entries(described).flatMap(([k, l]) => l.map((d) => `- ${k}: ${d}`)),
    ...Object.entries(results).flatMap(([k, m]) => Object.values(m).map((r) => `- ${k} ${r.phase}: ${r.msgs} msgs${r.calls !== null ? ` in ${r.calls} calls` : ''}, not-OK ${r.notOk}, errors ${r.errors}${r.complete ? '' : ', INCOMPLETE'}; warm-up ${r.warmup.seconds} s${r.warmup.jitCpuSeconds !== null ? ` (broker JIT ${r.warmup.jitCpuSeconds} CPU-s${r.warmup.jitQuiet ? '' : ', JIT busy at the cap'})` : ''}${r.warmup.steady ? '' : ', not steady at the cap'}; window ${r.cpu.wallSeconds} s.`)),
    ...Object.entries(failures).map(([k, m]) => `- **${k} failed**: ${m.split('\n')[0]}`),
    `- Raw: \`bench/results/${base}.json\`.`, '',
  ].join('\n');
  writeFileSync(join(resultsDir, `${base}.md`), md);
  const summary = [
    '# tsmq vs Apache RocketMQ — latest `npm run bench:vs-apache`', '',
    `Latest run: [${base}.md](${base}.md) (${started.toISOString()}, Apache ${o.peer}, ${o.scaling ? 'scaling' : `mode ${o.mode}`}, ${o.seconds} s windows, warm-up ≥ ${o.warmup} s; targets met ${met} of ${table.targets.length}). How it is measured and the full command: bench/README.md.`, '',
    ...caveats.map((c) => `> ${c}\n`),
    table.md, '',
    ...(scaling ? ['```', ...scaling.lines.filter(Boolean), '```', ''] : []),
    'Earlier: `vs-apache-2026-11-30T12-54-54-203Z.json` (Apache 4.9.7, 2 s warm-up, sync single sends + push consumer only: the broker JIT was still compiling in the measured window).', '',
  ].join('\n');
  writeFileSync(join(resultsDir, 'vs-apache.md'), summary);
  console.log(`wrote bench/results/${base}.md, ${base}.json and bench/results/vs-apache.md`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
