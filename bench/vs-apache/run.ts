/**
 * `npm run bench:vs-apache`: Apache RocketMQ (nameserver + broker from Maven Central jars) and tsmq
 * (`tsmq start`), one after the other in the same run, each driven by the same Java load
 * generator (bench/vs-apache/java, Apache rocketmq-client 4.9.8): `threads` closed-loop sync
 * senders of `size`-byte bodies for `seconds` (after a warm-up), then a DefaultMQPushConsumer
 * consuming everything produced.
 *
 * Output: a table on stdout, bench/results/vs-apache-<date>.json and bench/results/vs-apache.md.
 * Every process started here is stopped and every temp dir removed, also on failure / Ctrl-C.
 *
 * Flags: --seconds N (30) --warmup N (2) --threads N (16) --size BYTES (1024) --queues N (8)
 *        --broker-heap 1g --dir <parent of temp dirs> (os.tmpdir()) --only apache|tsmq
 *        --tsmq-root <dir> (the tsmq source tree to start; default this repository, e.g. an
 *        exported older commit for an A/B run) --no-report (stdout only, no files written)
 * Env: TSMQ_BROKER_NODE_ARGS (space-separated node flags for the tsmq broker, e.g.
 *      `--cpu-prof --cpu-prof-dir=/tmp/prof`; the profile is written at the broker's clean exit).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BenchChild } from '../lib/child.js';
import { warmPageCache } from '../lib/disk-ops.js';
import { cpuSecondsOf, machineInfo } from '../lib/os.js';
import { GiB } from '../lib/stats.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, '..', '..');
const JAVA_DIR = join(HERE, 'java');
const SERVER_POM_DIR = join(JAVA_DIR, 'apache-server');
const APACHE_SERVER_VERSION = '4.9.7';
const CLIENT_VERSION = '4.9.8';

interface Opts { seconds: number; warmup: number; threads: number; size: number; queues: number; brokerHeap: string; dir: string; only: string | null; tsmqRoot: string; report: boolean }

function parseArgs(argv: string[]): Opts {
  const o: Opts = { seconds: 30, warmup: 2, threads: 16, size: 1024, queues: 8, brokerHeap: '1g', dir: tmpdir(), only: null, tsmqRoot: REPO, report: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = (): string => {
      const x = argv[++i];
      if (x === undefined) throw new Error(`${a} needs a value`);
      return x;
    };
    if (a === '--seconds') o.seconds = Number(v());
    else if (a === '--warmup') o.warmup = Number(v());
    else if (a === '--threads') o.threads = Number(v());
    else if (a === '--size') o.size = Number(v());
    else if (a === '--queues') o.queues = Number(v());
    else if (a === '--broker-heap') o.brokerHeap = v();
    else if (a === '--dir') o.dir = v();
    else if (a === '--only') o.only = v();
    else if (a === '--tsmq-root') o.tsmqRoot = v();
    else if (a === '--no-report') o.report = false;
    else throw new Error(`unknown flag ${a}`);
  }
  for (const k of ['seconds', 'warmup', 'threads', 'size', 'queues'] as const) {
    if (!Number.isInteger(o[k]) || o[k] < 0) throw new Error(`--${k} must be a non-negative integer`);
  }
  return o;
}

// ---------- cleanup registry: processes we started (by pid) and temp dirs ----------
const procs = new Set<ChildProcess>();
const dirs = new Set<string>();

function killProc(p: ChildProcess, signal: NodeJS.Signals): void {
  if (p.exitCode !== null || p.signalCode !== null || p.pid === undefined) return;
  try {
    process.kill(-p.pid, signal); // own process group (spawned detached)
  } catch {
    try {
      p.kill(signal);
    } catch {
      /* gone */
    }
  }
}

async function stopProc(p: ChildProcess, graceMs = 15_000): Promise<void> {
  if (p.exitCode === null && p.signalCode === null) {
    const exited = new Promise((r) => p.once('exit', r));
    killProc(p, 'SIGTERM');
    const t = setTimeout(() => killProc(p, 'SIGKILL'), graceMs);
    await exited;
    clearTimeout(t);
  }
  procs.delete(p);
}

function cleanupSync(): void {
  for (const p of procs) killProc(p, 'SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
process.on('exit', cleanupSync);
for (const s of ['SIGINT', 'SIGTERM'] as const) {
  process.on(s, () => {
    cleanupSync();
    process.exit(130);
  });
}

function tempDir(parent: string, prefix: string): string {
  const d = mkdtempSync(join(parent, prefix));
  dirs.add(d);
  return d;
}

function startProc(cmd: string, args: string[], label: string, env: NodeJS.ProcessEnv = {}, cwd = REPO): BenchChild {
  const p = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, ...env } });
  procs.add(p);
  return BenchChild.wrap(p, label);
}

// ---------- ports ----------
function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const s = createServer();
    s.once('error', () => res(false));
    s.listen(port, '0.0.0.0', () => s.close(() => res(true)));
  });
}

/** A port P with P-2 (Apache's "VIP" port), P and P+1 (Apache's HA port) free. */
async function freePortTriple(used: Set<number>): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const p = 20000 + Math.floor(Math.random() * 30000);
    if ([p - 2, p, p + 1].some((x) => used.has(x))) continue;
    if ((await portFree(p - 2)) && (await portFree(p)) && (await portFree(p + 1))) {
      [p - 2, p, p + 1].forEach((x) => used.add(x));
      return p;
    }
  }
  throw new Error('no free port triple found');
}

// ---------- Maven builds (offline first, then online; cached by source hash) ----------
function hashOf(paths: string[]): string {
  const h = createHash('sha1');
  const files: string[] = [];
  const walk = (p: string): void => {
    if (!existsSync(p)) return;
    if (statSync(p).isDirectory()) {
      for (const n of readdirSync(p).sort()) if (n !== 'target') walk(join(p, n));
    } else files.push(p);
  };
  paths.forEach(walk);
  for (const f of files) {
    h.update(relative(JAVA_DIR, f));
    h.update(readFileSync(f));
  }
  return h.digest('hex').slice(0, 16);
}

function mavenBuild(name: string, pomDir: string, hashPaths: string[], goals: string[]): string {
  const buildDir = join(tmpdir(), 'tsmq-vs-apache-java', `${name}-${hashOf(hashPaths)}`);
  const stamp = join(buildDir, 'build-ok');
  if (existsSync(stamp)) return buildDir;
  mkdirSync(buildDir, { recursive: true });
  const args = ['-B', '-q', `-Dva.buildDir=${buildDir}`, ...goals];
  let r = spawnSync('mvn', ['-o', ...args], { cwd: pomDir, encoding: 'utf8' });
  if (r.status !== 0) r = spawnSync('mvn', args, { cwd: pomDir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`Maven build of ${name} failed:\n${(r.stdout + r.stderr).slice(-5000)}`);
  writeFileSync(stamp, new Date().toISOString());
  return buildDir;
}

// ---------- JVM settings ----------
const ADD_OPENS = ['java.nio', 'sun.nio.ch', 'jdk.internal.ref', 'java.lang', 'java.util'].map((p) => `--add-opens=java.base/${p}=ALL-UNNAMED`);

function jvm(o: Opts): Record<'namesrv' | 'broker' | 'loadgen', string[]> {
  // Modeled on Apache's bin/runserver.sh / runbroker.sh (G1 flags), heaps sized for 2 cores / 24 GiB.
  const g1 = ['-server', '-XX:+UseG1GC', '-XX:G1HeapRegionSize=16m', '-XX:G1ReservePercent=25', '-XX:InitiatingHeapOccupancyPercent=30', '-XX:SoftRefLRUPolicyMSPerMB=0', '-XX:-OmitStackTraceInFastThrow'];
  return {
    namesrv: ['-Xms256m', '-Xmx256m', ...g1],
    broker: [`-Xms${o.brokerHeap}`, `-Xmx${o.brokerHeap}`, ...g1, '-XX:MaxDirectMemorySize=4g', '-XX:-UseLargePages'],
    loadgen: ['-Xms1g', '-Xmx1g', '-XX:+UseG1GC', '-Drocketmq.client.logUseSlf4j=true', '-Drocketmq.client.rebalance.waitInterval=1000'],
  };
}

const LOGBACK = `<?xml version="1.0" encoding="UTF-8"?>
<configuration>
  <appender name="ERR" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%d{HH:mm:ss.SSS} [%thread] %-5level %logger{20} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="ERR"/></root>
</configuration>
`;

// ---------- the two systems ----------
interface Running { namesrv: string; pids: number[]; stop: () => Promise<void>; describe: string }

async function startApache(o: Opts, cp: string, ports: Set<number>): Promise<Running> {
  const home = tempDir(o.dir, 'tsmq-vs-apache-rmq-');
  mkdirSync(join(home, 'conf'));
  writeFileSync(join(home, 'conf', 'logback_namesrv.xml'), LOGBACK);
  writeFileSync(join(home, 'conf', 'logback_broker.xml'), LOGBACK);
  const nsPort = await freePortTriple(ports);
  const brokerPort = await freePortTriple(ports);
  writeFileSync(join(home, 'namesrv.conf'), `listenPort=${nsPort}\n`);
  const store = join(home, 'store');
  writeFileSync(
    join(home, 'broker.conf'),
    [
      'brokerClusterName=VsApacheCluster', 'brokerName=broker-a', 'brokerId=0', `namesrvAddr=127.0.0.1:${nsPort}`,
      `listenPort=${brokerPort}`, 'brokerIP1=127.0.0.1', `storePathRootDir=${store}`, `storePathCommitLog=${join(store, 'commitlog')}`,
      'flushDiskType=ASYNC_FLUSH', 'brokerRole=ASYNC_MASTER', 'autoCreateTopicEnable=true', 'deleteWhen=04', 'fileReservedTime=48', '',
    ].join('\n'),
  );
  const env = { ROCKETMQ_HOME: home };
  const sys = [`-Duser.home=${home}`, `-Drocketmq.home.dir=${home}`];
  const j = jvm(o);
  const ns = startProc('java', [...j.namesrv, ...ADD_OPENS, ...sys, '-cp', cp, 'org.apache.rocketmq.namesrv.NamesrvStartup', '-c', join(home, 'namesrv.conf')], 'apache namesrv', env);
  await ns.waitFor(/boot success/, 60_000);
  const br = startProc('java', [...j.broker, ...ADD_OPENS, ...sys, '-cp', cp, 'org.apache.rocketmq.broker.BrokerStartup', '-c', join(home, 'broker.conf')], 'apache broker', env);
  await br.waitFor(/boot success/, 90_000);
  return {
    namesrv: `127.0.0.1:${nsPort}`,
    pids: [br.pid],
    describe: `Apache RocketMQ ${APACHE_SERVER_VERSION} (namesrv :${nsPort}, broker :${brokerPort}, store ${store})`,
    stop: async () => {
      await stopProc(br.proc);
      await stopProc(ns.proc);
      rmSync(home, { recursive: true, force: true });
      dirs.delete(home);
    },
  };
}

async function startTsmq(o: Opts, ports: Set<number>): Promise<Running> {
  const dir = tempDir(o.dir, 'tsmq-vs-apache-tsmq-');
  const nsPort = await freePortTriple(ports);
  const brokerPort = await freePortTriple(ports);
  const root = o.tsmqRoot;
  const cliArgs = [join(root, 'src/cli/main.ts'), 'start', '-n', String(nsPort), '-p', String(brokerPort), '--store', join(dir, 'store'), '-o', 'grpcListenPort=-1'];
  const nodeArgs = (process.env.TSMQ_BROKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const env = { TSMQ_LOG_LEVEL: process.env.TSMQ_LOG_LEVEL ?? 'warn' };
  // with node flags (e.g. --cpu-prof, which NODE_OPTIONS refuses) node runs the CLI itself through tsx's loader
  const ch = nodeArgs.length > 0
    ? startProc(process.execPath, [...nodeArgs, '--import', 'tsx', ...cliArgs], 'tsmq start', env, root)
    : startProc(join(REPO, 'node_modules', '.bin', 'tsx'), cliArgs, 'tsmq start', env, root);
  await ch.waitFor(/tsmq started/, 60_000);
  // tsx runs the CLI in a child node process: measure CPU of the whole group's leaf (the real broker).
  const leaf = nodeArgs.length > 0 ? [] : spawnSync('pgrep', ['-P', String(ch.pid)], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean).map(Number);
  return {
    namesrv: `127.0.0.1:${nsPort}`,
    pids: leaf.length > 0 ? leaf : [ch.pid],
    describe: `tsmq (tsx src/cli/main.ts start, namesrv :${nsPort}, broker :${brokerPort}, store ${join(dir, 'store')})`,
    stop: async () => {
      await stopProc(ch.proc);
      rmSync(dir, { recursive: true, force: true });
      dirs.delete(dir);
    },
  };
}

interface ProduceResult { queues: number; measuredOk: number; totalOk: number; notOk: number; errors: number; msgsPerSec: number; p50Ms: number; p90Ms: number; p99Ms: number; p999Ms: number; maxMs: number }
interface ConsumeResult { expected: number; distinct: number; deliveries: number; complete: boolean; firstMessageAfterMs: number; secondsFromFirst: number; msgsPerSec: number; msgsPerSecFromStart: number }
interface SystemResult {
  system: string; describe: string; produce: ProduceResult; consume: ConsumeResult; brokerCpuSeconds: number;
  /** broker CPU-s until the produce phase's result line, and from there to the end (the consume phase) */
  brokerCpuSecondsProduce: number; brokerCpuSecondsConsume: number; consumeMsgsPerBrokerCpuSecond: number; elapsedSeconds: number;
}

async function runLoad(o: Opts, cp: string, sys: Running, label: string): Promise<SystemResult> {
  const args = [`namesrv=${sys.namesrv}`, `seconds=${o.seconds}`, `warmupSeconds=${o.warmup}`, `threads=${o.threads}`, `size=${o.size}`, `queues=${o.queues}`, `consumeTimeoutSeconds=${Math.max(60, o.seconds * 6)}`];
  const cpu0 = sys.pids.reduce((s, p) => s + cpuSecondsOf(p), 0);
  const t0 = Date.now();
  const lg = startProc('java', [...jvm(o).loadgen, '-cp', cp, 'tsmq.bench.LoadGen', ...args], `load generator vs ${label}`);
  // the broker's CPU per phase: sampled when the produce result line appears
  let cpuProduce = Number.NaN;
  void lg.waitFor(/"phase":"produce"/, 3_600_000).then(
    () => (cpuProduce = sys.pids.reduce((s, p) => s + cpuSecondsOf(p), 0) - cpu0),
    () => undefined,
  );
  const code = await lg.exited;
  procs.delete(lg.proc);
  const cpu = sys.pids.reduce((s, p) => s + cpuSecondsOf(p), 0) - cpu0;
  const lines = lg.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  const produce = lines.find((l) => l.phase === 'produce') as unknown as ProduceResult | undefined;
  const consume = lines.find((l) => l.phase === 'consume') as unknown as ConsumeResult | undefined;
  if (code !== 0 || !produce || !consume) throw new Error(`load generator vs ${label} failed (exit ${code}):\n${lg.stderr.slice(-4000)}\n${lg.stdout.slice(-2000)}`);
  const r2 = (x: number): number => Math.round(x * 100) / 100;
  return {
    system: label, describe: sys.describe, produce, consume, brokerCpuSeconds: r2(cpu),
    brokerCpuSecondsProduce: r2(cpuProduce), brokerCpuSecondsConsume: r2(cpu - cpuProduce),
    consumeMsgsPerBrokerCpuSecond: Math.round(consume.distinct / (cpu - cpuProduce)),
    elapsedSeconds: (Date.now() - t0) / 1000,
  };
}

// ---------- report ----------
const fmt = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

function table(r: Record<string, SystemResult>): { rows: string[][]; md: string } {
  const a = r.apache;
  const t = r.tsmq;
  const ratio = (f: (s: SystemResult) => number): string => (a && t ? fmt(f(t) / f(a), 2) : 'n/a');
  const val = (s: SystemResult | undefined, f: (s: SystemResult) => number, d: number): string => (s ? fmt(f(s), d) : 'n/a');
  const spec: Array<[string, (s: SystemResult) => number, number, string]> = [
    ['produce msgs/s', (s) => s.produce.msgsPerSec, 0, 'higher is better'],
    ['consume msgs/s', (s) => s.consume.msgsPerSec, 0, 'higher is better'],
    ['send p50 ms', (s) => s.produce.p50Ms, 3, 'lower is better'],
    ['send p99 ms', (s) => s.produce.p99Ms, 3, 'lower is better'],
    ['send p99.9 ms', (s) => s.produce.p999Ms, 3, 'lower is better'],
    ['broker CPU s (whole run)', (s) => s.brokerCpuSeconds, 1, ''],
    ['broker CPU s (consume phase)', (s) => s.brokerCpuSecondsConsume, 2, ''],
    ['consume msgs / broker CPU s', (s) => s.consumeMsgsPerBrokerCpuSecond, 0, 'higher is better'],
  ];
  const rows = [['metric', `Apache ${APACHE_SERVER_VERSION}`, 'tsmq', 'tsmq/Apache', ''], ...spec.map(([n, f, d, note]) => [n, val(a, f, d), val(t, f, d), ratio(f), note])];
  const md = [`| ${rows[0]!.join(' | ')} |`, `|${rows[0]!.map(() => '---').join('|')}|`, ...rows.slice(1).map((x) => `| ${x.join(' | ')} |`)].join('\n');
  return { rows, md };
}

function printTable(rows: string[][]): void {
  const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  '));
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const started = new Date();
  console.log(`vs-apache: ${o.threads} sender threads, ${o.size} B bodies, ${o.warmup} s warm-up + ${o.seconds} s, ${o.queues} queues; data under ${o.dir}`);
  console.log('building Java (load generator: rocketmq-client 4.9.8; Apache server 4.9.7) ...');
  const lgDir = mavenBuild('loadgen', JAVA_DIR, [join(JAVA_DIR, 'pom.xml'), join(JAVA_DIR, 'src')], ['compile', 'dependency:copy-dependencies']);
  const srvDir = mavenBuild('apache-server', SERVER_POM_DIR, [join(SERVER_POM_DIR, 'pom.xml')], ['dependency:copy-dependencies']);
  const lgCp = `${join(lgDir, 'classes')}:${join(lgDir, 'lib', '*')}`;
  const srvCp = join(srvDir, 'lib', '*');
  const ports = new Set<number>();
  const results: Record<string, SystemResult> = {};
  const failures: Record<string, string> = {};
  const order = (['apache', 'tsmq'] as const).filter((s) => !o.only || o.only === s);
  for (const name of order) {
    let sys: Running | null = null;
    try {
      const warm = mkdtempSync(join(o.dir, 'tsmq-vs-apache-warm-'));
      dirs.add(warm);
      warmPageCache(warm, 2 * GiB); // same first-touch memory conditions for both (bench/README.md)
      rmSync(warm, { recursive: true, force: true });
      dirs.delete(warm);
      console.log(`starting ${name} ...`);
      sys = name === 'apache' ? await startApache(o, srvCp, ports) : await startTsmq(o, ports);
      console.log(`  ${sys.describe}; running the load generator ...`);
      results[name] = await runLoad(o, lgCp, sys, name);
      const r = results[name]!;
      console.log(`  produce ${fmt(r.produce.msgsPerSec, 0)} msgs/s (p50 ${r.produce.p50Ms} ms, p99 ${r.produce.p99Ms} ms, errors ${r.produce.errors}), consume ${fmt(r.consume.msgsPerSec, 0)} msgs/s (${r.consume.distinct}/${r.consume.expected}${r.consume.complete ? '' : ' INCOMPLETE'})`);
    } catch (e) {
      failures[name] = (e as Error).message;
      console.error(`${name} failed: ${(e as Error).message}`);
    } finally {
      if (sys) await sys.stop();
    }
  }
  const { rows, md } = table(results);
  console.log('');
  printTable(rows);
  if (!o.report) {
    console.log(`RESULT ${JSON.stringify({ tsmqRoot: o.tsmqRoot, results, failures })}`);
    return;
  }
  const j = jvm(o);
  const resultsDir = join(REPO, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  const json = {
    kind: 'vs-apache', startedAt: started.toISOString(), options: o, apacheServerVersion: APACHE_SERVER_VERSION, clientVersion: CLIENT_VERSION,
    machine: machineInfo(REPO, o.dir), jvm: j, results, failures, table: rows,
  };
  writeFileSync(join(resultsDir, `vs-apache-${stamp}.json`), JSON.stringify(json, null, 2) + '\n');
  const notes = [
    `# tsmq vs Apache RocketMQ (${started.toISOString()})`, '',
    `Same run, one after the other (${order.join(', then ')}), same Java load generator (Apache rocketmq-client ${CLIENT_VERSION}):`,
    `${o.threads} threads of synchronous \`DefaultMQProducer.send()\`, ${o.size} B bodies, one topic with ${o.queues} queues, ${o.warmup} s warm-up + ${o.seconds} s measured;`,
    'then a `DefaultMQPushConsumer` (new group, CONSUME_FROM_FIRST_OFFSET) consumes everything sent (warm-up included); consume msgs/s from the first delivered message to the last distinct one.',
    'Both brokers ASYNC_FLUSH, store in a temp dir on the same disk, loopback.', '',
    md, '',
    `- Apache: rocketmq-namesrv / rocketmq-broker **${APACHE_SERVER_VERSION}** (4.9.8 server jars are not on Maven Central); ASYNC_MASTER, ASYNC_FLUSH, autoCreateTopicEnable.`,
    `- JVM namesrv: \`${j.namesrv.join(' ')}\``, `- JVM broker: \`${j.broker.join(' ')}\``, `- JVM load generator: \`${j.loadgen.join(' ')}\``,
    '- tsmq: `tsx src/cli/main.ts start -n <port> -p <port> --store <tmp> -o grpcListenPort=-1` (defaults: ASYNC_FLUSH).',
    ...Object.entries(results).map(([k, r]) => `- ${k}: produce ok ${r.produce.measuredOk} measured / ${r.produce.totalOk} total, not-OK ${r.produce.notOk}, errors ${r.produce.errors}, queues ${r.produce.queues}; consume ${r.consume.distinct}/${r.consume.expected} distinct (${r.consume.deliveries} deliveries), first message after ${r.consume.firstMessageAfterMs} ms, ${fmt(r.consume.msgsPerSecFromStart, 0)} msgs/s counted from consumer start.`),
    ...Object.entries(failures).map(([k, m]) => `- **${k} failed**: ${m.split('\n')[0]}`),
    `- Raw: \`bench/results/vs-apache-${stamp}.json\`.`, '',
  ];
  writeFileSync(join(resultsDir, 'vs-apache.md'), notes.join('\n'));
  console.log(`\nwrote bench/results/vs-apache-${stamp}.json and bench/results/vs-apache.md`);
  if (Object.keys(failures).length > 0) process.exitCode = 1;
}

main().catch((e: unknown) => {
  console.error(e);
  cleanupSync();
  process.exitCode = 1;
});
