/**
 * The two systems of bench/vs-apache, started fresh for each broker configuration:
 * - Apache RocketMQ (5.3.3 by default, 4.9.7 with `--peer 4.9.7`): NamesrvStartup and BrokerStartup
 *   from Maven Central jars, with the JVM flags of Apache's bin/runserver.sh / bin/runbroker.sh
 *   (JDK ≥ 9 branch; GC log into the temp home instead of /dev/shm; heap overridable) and, for 5.x,
 *   `-Drmq.logback.configurationFile=<home>/conf/rmq.{namesrv,broker}.logback.xml` (the files the
 *   distribution ships, taken from the jars: INFO to files under user.home/logs, as mqbroker does).
 * - tsmq: `node dist/cli/main.js start` (namesrv and broker in one process), the build `npm start` runs
 *   (scripts/build-if-stale.mjs brings the root's dist/ up to date first); with `tsx: true` the sources
 *   through tsx, as before 2026-12-02 (tsx's esbuild output wraps every named closure in `__name`).
 * Both ASYNC_FLUSH unless `flush` is SYNC_FLUSH; stores in temp dirs; 127.0.0.1 only.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { removeDir, startProc, stopProc, tempDir } from './procs.js';

export type FlushDiskType = 'ASYNC_FLUSH' | 'SYNC_FLUSH';

export interface Running {
  system: 'apache' | 'tsmq';
  namesrv: string;
  /** roots of the server's process trees (Apache: broker + namesrv JVMs; tsmq: its node process, or the tsx launcher) */
  cpuRoots: number[];
  /** the broker JVM (its JIT threads gate the warm-up); null for tsmq */
  jvmPid: number | null;
  describe: string;
  stop: () => Promise<void>;
}

export interface PeerOpts {
  dir: string;
  flush: FlushDiskType;
  cpus: string | null;
  repo: string;
}

export interface ApacheOpts extends PeerOpts {
  version: string;
  classpath: string;
  /** the jar dir, to take 5.x's rmq.*.logback.xml from */
  libDir: string;
  brokerHeap: string;
  namesrvHeap: string;
}

// ---------- ports ----------
function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const s = createServer();
    s.once('error', () => res(false));
    s.listen(port, '0.0.0.0', () => s.close(() => res(true)));
  });
}

const usedPorts = new Set<number>();
/**
 * A port P with P-2 (Apache's "VIP" port), P and P+1 (Apache's HA port) free, below Linux's
 * ephemeral range (ip_local_port_range starts at 32768): a port picked inside it could be taken by
 * some client connection's local port before the broker binds it ("Failed to bind", seen 2026-12-02).
 */
async function freePortTriple(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const p = 20002 + Math.floor(Math.random() * 12000);
    if ([p - 2, p, p + 1].some((x) => usedPorts.has(x))) continue;
    if ((await portFree(p - 2)) && (await portFree(p)) && (await portFree(p + 1))) {
      [p - 2, p, p + 1].forEach((x) => usedPorts.add(x));
      return p;
    }
  }
  throw new Error('no free port triple found');
}

// ---------- Apache ----------
export const ADD_OPENS = ['java.nio', 'sun.nio.ch', 'jdk.internal.ref', 'java.lang', 'java.util'].map((p) => `--add-opens=java.base/${p}=ALL-UNNAMED`);

/** JVM flags of Apache's runserver.sh / runbroker.sh (JDK ≥ 9), GC log under `gcLogDir`. */
export function apacheJvmFlags(version: string, brokerHeap: string, namesrvHeap: string, gcLogDir: string): { namesrv: string[]; broker: string[] } {
  const g1 = ['-XX:+UseG1GC', '-XX:G1HeapRegionSize=16m', '-XX:G1ReservePercent=25', '-XX:InitiatingHeapOccupancyPercent=30', '-XX:SoftRefLRUPolicyMSPerMB=0'];
  const gcLog = (f: string): string => `-Xlog:gc*:file=${join(gcLogDir, f)}:time,tags:filecount=5,filesize=30M`;
  return {
    namesrv: ['-server', `-Xms${namesrvHeap}`, `-Xmx${namesrvHeap}`, '-XX:MetaspaceSize=128m', '-XX:MaxMetaspaceSize=320m', ...g1, gcLog('rmq_srv_gc_%p_%t.log'), '-XX:-OmitStackTraceInFastThrow', '-XX:-UseLargePages'],
    broker: [
      '-server', `-Xms${brokerHeap}`, `-Xmx${brokerHeap}`, ...g1, gcLog('rmq_broker_gc_%p_%t.log'), '-XX:-OmitStackTraceInFastThrow', '-XX:+AlwaysPreTouch', '-XX:MaxDirectMemorySize=15g',
      '-XX:-UseLargePages', '-XX:-UseBiasedLocking', ...(version.startsWith('4.') ? [] : ['-XX:+IgnoreUnrecognizedVMOptions']),
    ],
  };
}

const QUIET_LOGBACK = `<?xml version="1.0" encoding="UTF-8"?>
<configuration>
  <appender name="ERR" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%d{HH:mm:ss.SSS} [%thread] %-5level %logger{20} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="ERR"/></root>
</configuration>
`;

function extractFromJar(jar: string, entry: string, to: string): void {
  const r = spawnSync('unzip', ['-p', jar, entry], { maxBuffer: 16 << 20 });
  if (r.status !== 0 || r.stdout.length === 0) throw new Error(`cannot extract ${entry} from ${jar}: ${r.stderr?.toString()}`);
  writeFileSync(to, r.stdout);
}

export async function startApache(o: ApacheOpts): Promise<Running> {
  const home = tempDir(o.dir, 'tsmq-vs-apache-rmq-');
  const conf = join(home, 'conf');
  mkdirSync(conf);
  const nsPort = await freePortTriple();
  const brokerPort = await freePortTriple();
  writeFileSync(join(home, 'namesrv.conf'), `listenPort=${nsPort}\n`);
  const store = join(home, 'store');
  writeFileSync(
    join(home, 'broker.conf'),
    [
      'brokerClusterName=VsApacheCluster', 'brokerName=broker-a', 'brokerId=0', `namesrvAddr=127.0.0.1:${nsPort}`,
      `listenPort=${brokerPort}`, 'brokerIP1=127.0.0.1', `storePathRootDir=${store}`, `storePathCommitLog=${join(store, 'commitlog')}`,
      `flushDiskType=${o.flush}`, 'brokerRole=ASYNC_MASTER', 'autoCreateTopicEnable=true', 'deleteWhen=04', 'fileReservedTime=48', '',
    ].join('\n'),
  );
  const v5 = !o.version.startsWith('4.');
  const logProps = { namesrv: [] as string[], broker: [] as string[] };
  if (v5) {
    extractFromJar(join(o.libDir, `rocketmq-namesrv-${o.version}.jar`), 'rmq.namesrv.logback.xml', join(conf, 'rmq.namesrv.logback.xml'));
    extractFromJar(join(o.libDir, `rocketmq-broker-${o.version}.jar`), 'rmq.broker.logback.xml', join(conf, 'rmq.broker.logback.xml'));
    logProps.namesrv = [`-Drmq.logback.configurationFile=${join(conf, 'rmq.namesrv.logback.xml')}`];
    logProps.broker = [`-Drmq.logback.configurationFile=${join(conf, 'rmq.broker.logback.xml')}`];
  } else {
    // 4.9.x reads ${ROCKETMQ_HOME}/conf/logback_{namesrv,broker}.xml itself; warnings to stderr only
    writeFileSync(join(conf, 'logback_namesrv.xml'), QUIET_LOGBACK);
    writeFileSync(join(conf, 'logback_broker.xml'), QUIET_LOGBACK);
  }
  const env = { ROCKETMQ_HOME: home };
  const sys = [`-Duser.home=${home}`, `-Drocketmq.home.dir=${home}`];
  const j = apacheJvmFlags(o.version, o.brokerHeap, o.namesrvHeap, home);
  const ns = startProc('java', [...j.namesrv, ...ADD_OPENS, ...sys, ...logProps.namesrv, '-cp', o.classpath, 'org.apache.rocketmq.namesrv.NamesrvStartup', '-c', join(home, 'namesrv.conf')], `apache ${o.version} namesrv`, { cwd: home, env, cpus: o.cpus });
  await ns.waitFor(/boot success/, 90_000);
  const br = startProc('java', [...j.broker, ...ADD_OPENS, ...sys, ...logProps.broker, '-cp', o.classpath, 'org.apache.rocketmq.broker.BrokerStartup', '-c', join(home, 'broker.conf')], `apache ${o.version} broker`, { cwd: home, env, cpus: o.cpus });
  try {
    await br.waitFor(/boot success/, 180_000);
  } catch (e) {
    await stopProc(br.proc);
    await stopProc(ns.proc);
    throw e;
  }
  return {
    system: 'apache',
    namesrv: `127.0.0.1:${nsPort}`,
    cpuRoots: [br.pid, ns.pid],
    jvmPid: br.pid,
    describe: `Apache RocketMQ ${o.version} ${o.flush} (namesrv :${nsPort} pid ${ns.pid}, broker :${brokerPort} pid ${br.pid}${o.cpus ? `, cpus ${o.cpus}` : ''})`,
    stop: async () => {
      await stopProc(br.proc);
      await stopProc(ns.proc);
      removeDir(home);
    },
  };
}

// ---------- tsmq ----------
export interface TsmqOpts extends PeerOpts {
  /** source tree to start (default: this repository) */
  root: string;
  /** run src/ through tsx instead of the root's built dist/ (default false) */
  tsx?: boolean;
}

/**
 * Brings `root`'s dist/ up to date (scripts/build-if-stale.mjs, tsc: a no-op when current).
 * Throws when the build fails.
 */
export function buildTsmq(root: string): void {
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build-if-stale.mjs'), '--quiet'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`build of ${root} failed (scripts/build-if-stale.mjs exit ${r.status})`);
}

export async function startTsmq(o: TsmqOpts): Promise<Running> {
  const dir = tempDir(o.dir, 'tsmq-vs-apache-tsmq-');
  const nsPort = await freePortTriple();
  const brokerPort = await freePortTriple();
  const entry = o.tsx === true ? join(o.root, 'src/cli/main.ts') : join(o.root, 'dist/cli/main.js');
  if (o.tsx !== true) buildTsmq(o.root);
  const cliArgs = [entry, 'start', '-n', String(nsPort), '-p', String(brokerPort), '--store', join(dir, 'store'), '-o', 'grpcListenPort=-1', '-o', `flushDiskType=${o.flush}`];
  // TSMQ_BROKER_CONF: extra broker/store keys for A/B runs, space-separated key=value (e.g. commitCommitLogAsync=true)
  for (const kv of (process.env.TSMQ_BROKER_CONF ?? '').split(' ').filter(Boolean)) cliArgs.push('-o', kv);
  const nodeArgs = (process.env.TSMQ_BROKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const env = { TSMQ_LOG_LEVEL: process.env.TSMQ_LOG_LEVEL ?? 'warn' };
  // the build: node runs it directly (node flags such as --cpu-prof go first); tsx: with node flags
  // (which NODE_OPTIONS refuses) node runs the CLI itself through tsx's loader, else tsx's launcher
  const ch = o.tsx !== true
    ? startProc(process.execPath, [...nodeArgs, ...cliArgs], 'tsmq start', { cwd: o.root, env, cpus: o.cpus })
    : nodeArgs.length > 0
      ? startProc(process.execPath, [...nodeArgs, '--import', 'tsx', ...cliArgs], 'tsmq start', { cwd: o.root, env, cpus: o.cpus })
      : startProc(join(o.repo, 'node_modules', '.bin', 'tsx'), cliArgs, 'tsmq start', { cwd: o.root, env, cpus: o.cpus });
  try {
    await ch.waitFor(/tsmq started/, 90_000);
  } catch (e) {
    await stopProc(ch.proc);
    throw e;
  }
  return {
    system: 'tsmq',
    namesrv: `127.0.0.1:${nsPort}`,
    cpuRoots: [ch.pid],
    jvmPid: null,
    describe: `tsmq ${o.flush}${o.tsx === true ? ' via tsx' : ' from dist/'} (namesrv :${nsPort}, broker :${brokerPort}, process tree of pid ${ch.pid}${o.cpus ? `, cpus ${o.cpus}` : ''})`,
    stop: async () => {
      await stopProc(ch.proc);
      removeDir(dir);
    },
  };
}
