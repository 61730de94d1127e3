/**
 * Apache RocketMQ 5.3.3 (or 4.9.7) NamesrvStartup / BrokerStartup from Maven Central jars (the build of
 * bench/vs-apache/java/apache-server, cached under `$TMPDIR/tsmq-vs-apache-java/`), and a tsmq
 * broker (`tsx src/cli/main.ts broker -c <conf>`), each in its own process group, for tests that
 * swap one broker for the other on the same store directory. Stops by pid: `stop()` sends SIGTERM
 * (Apache's shutdown hook / tsmq's graceful shutdown) and waits; `kill()` sends SIGKILL.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mavenBuild } from '../../../bench/vs-apache/maven.js';
import { fetchClusterInfo } from '../../../src/cli/commands/admin-nameserver.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const APACHE_VERSION = '5.3.3';
const ADD_OPENS = ['java.nio', 'sun.nio.ch', 'jdk.internal.ref', 'java.lang', 'java.util'].map((p) => `--add-opens=java.base/${p}=ALL-UNNAMED`);

/** Apache RocketMQ 4.9's last broker/namesrv on Maven Central (there is no 4.9.8 rocketmq-broker artifact). */
export const APACHE_4_VERSION = '4.9.7';

/** Classpath (lib/*) and lib dir of Apache's server jars of `version`, built (or taken from the cache) by Maven. */
export function apacheServerJars(version: string = APACHE_VERSION): { classpath: string; libDir: string } {
  const pomDir = join(REPO, 'bench', 'vs-apache', 'java', 'apache-server');
  const dir = mavenBuild(`apache-server-${version}`, pomDir, [join(pomDir, 'pom.xml')], ['dependency:copy-dependencies'], { 'rocketmq.server.version': version });
  return { classpath: join(dir, 'lib', '*'), libDir: join(dir, 'lib') };
}

export class ServerProc {
  out = '';
  readonly exited: Promise<number | null>;
  constructor(readonly proc: ChildProcess, readonly label: string) {
    this.exited = new Promise((res) => proc.once('exit', (c) => res(c)));
    const add = (b: Buffer): void => {
      this.out += b.toString();
      if (this.out.length > 400_000) this.out = this.out.slice(-200_000);
    };
    proc.stdout?.on('data', add);
    proc.stderr?.on('data', add);
  }

  async waitFor(re: RegExp, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!re.test(this.out)) {
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) throw new Error(`${this.label} exited (${this.proc.exitCode ?? this.proc.signalCode}):\n${this.out.slice(-4000)}`);
      if (Date.now() > deadline) throw new Error(`${this.label}: no ${re} within ${timeoutMs} ms:\n${this.out.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private signal(s: NodeJS.Signals): void {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null || this.proc.pid === undefined) return;
    try {
      process.kill(-this.proc.pid, s);
    } catch {
      /* gone */
    }
  }

  /** SIGTERM, SIGKILL after `graceMs`; resolves when the process has exited. */
  async stop(graceMs = 30_000): Promise<void> {
    this.signal('SIGTERM');
    const t = setTimeout(() => this.signal('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(t);
    this.signal('SIGKILL');
  }

  /** SIGKILL (an unclean stop: no shutdown hook runs). */
  async kill(): Promise<void> {
    this.signal('SIGKILL');
    await this.exited;
  }
}

function start(cmd: string, args: string[], label: string, cwd: string, env: NodeJS.ProcessEnv = {}): ServerProc {
  const p = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, ...env } });
  return new ServerProc(p, label);
}

/** A free TCP port P with P-2 (Apache's fastRemoting port) and P+1 (its HA port) free too. */
export async function freePortTriple(): Promise<number> {
  const free = (port: number): Promise<boolean> =>
    new Promise((res) => {
      const s = createServer();
      s.once('error', () => res(false));
      s.listen(port, '0.0.0.0', () => s.close(() => res(true)));
    });
  for (let i = 0; i < 200; i++) {
    const p = 20000 + Math.floor(Math.random() * 30000);
    if ((await free(p - 2)) && (await free(p)) && (await free(p + 1))) return p;
  }
  throw new Error('no free port triple');
}

function extractFromJar(jar: string, entry: string, to: string): void {
  const r = spawnSync('unzip', ['-p', jar, entry], { maxBuffer: 16 << 20 });
  if (r.status !== 0 || r.stdout.length === 0) throw new Error(`cannot extract ${entry} from ${jar}`);
  writeFileSync(to, r.stdout);
}

/**
 * The JVM command line pieces shared by the Apache namesrv and broker (home = ROCKETMQ_HOME, logs under it).
 * 5.x takes its logback file from the jar; 4.9 insists on `<home>/conf/logback_<role>.xml` (it
 * exits without one), written here when missing: INFO to `<home>/logs/<role>.log`.
 */
function apacheJvm(home: string, libDir: string, role: 'namesrv' | 'broker', heap: string, version: string): string[] {
  const conf = join(home, 'conf');
  mkdirSync(conf, { recursive: true });
  if (version.startsWith('4.')) {
    const v4xml = join(conf, `logback_${role}.xml`);
    if (!existsSync(v4xml)) {
      writeFileSync(v4xml, `<configuration><appender name="F" class="ch.qos.logback.core.FileAppender"><file>${join(home, 'logs', `${role}.log`)}</file><encoder><pattern>%d %-5level [%thread] %logger{20} - %msg%n</pattern></encoder></appender><root level="INFO"><appender-ref ref="F"/></root></configuration>\n`);
    }
    return [`-Xms${heap}`, `-Xmx${heap}`, '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', ...ADD_OPENS, `-Duser.home=${home}`, `-Drocketmq.home.dir=${home}`];
  }
  const xml = join(conf, `rmq.${role}.logback.xml`);
  extractFromJar(join(libDir, `rocketmq-${role}-${version}.jar`), `rmq.${role}.logback.xml`, xml);
  return [`-Xms${heap}`, `-Xmx${heap}`, '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', ...ADD_OPENS, `-Duser.home=${home}`, `-Drocketmq.home.dir=${home}`, `-Drmq.logback.configurationFile=${xml}`];
}

/** Apache's NamesrvStartup (`version`, default 5.3.3) on `port`; resolves once it printed "boot success". */
export async function startApacheNamesrv(home: string, port: number, version: string = APACHE_VERSION): Promise<ServerProc> {
  const { classpath, libDir } = apacheServerJars(version);
  writeFileSync(join(home, 'namesrv.conf'), `listenPort=${port}\n`);
  const p = start('java', [...apacheJvm(home, libDir, 'namesrv', '256m', version), '-cp', classpath, 'org.apache.rocketmq.namesrv.NamesrvStartup', '-c', join(home, 'namesrv.conf')], 'apache namesrv', home, { ROCKETMQ_HOME: home });
  await p.waitFor(/boot success/, 120_000);
  return p;
}

/** Apache's BrokerStartup (`version`, default 5.3.3) -c `conf`; resolves once it printed "boot success". */
export async function startApacheBroker(home: string, conf: string, version: string = APACHE_VERSION): Promise<ServerProc> {
  const { classpath, libDir } = apacheServerJars(version);
  const p = start('java', [...apacheJvm(home, libDir, 'broker', '512m', version), '-XX:MaxDirectMemorySize=2g', '-cp', classpath, 'org.apache.rocketmq.broker.BrokerStartup', '-c', conf], 'apache broker', home, { ROCKETMQ_HOME: home });
  await p.waitFor(/boot success/, 180_000);
  return p;
}

/** `tsmq broker -c conf` (tsx, from this repository); resolves once it printed "tsmq broker started". */
export async function startTsmqBroker(conf: string, extra: string[] = []): Promise<ServerProc> {
  const p = start(join(REPO, 'node_modules', '.bin', 'tsx'), [join(REPO, 'src', 'cli', 'main.ts'), 'broker', '-c', conf, ...extra], 'tsmq broker', REPO, { TSMQ_LOG_LEVEL: process.env.TSMQ_LOG_LEVEL ?? 'info' });
  await p.waitFor(/tsmq broker started/, 120_000);
  return p;
}

/** Waits until the nameserver lists `brokerAddr` as master of `cluster` ("boot success" comes before the first registration). */
export async function waitRegistered(namesrv: string, cluster: string, brokerAddr: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const info = await fetchClusterInfo(namesrv, 3000).catch(() => null);
    const names = info?.clusterAddrTable[cluster] ?? [];
    if (names.some((n) => info!.brokerAddrTable[n]?.brokerAddrs?.['0'] === brokerAddr)) return;
    if (Date.now() > deadline) throw new Error(`${brokerAddr} not registered in ${cluster} at ${namesrv} within ${timeoutMs} ms: ${JSON.stringify(info)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
