/**
 * Builds and runs the Java test peers in test/interop/java (Apache RocketMQ 4.9.8 store, client
 * and admin tools; test/interop/java/store5: Apache RocketMQ 5.3.3 store; rocketmq5: 5.3.3 remoting
 * client and tools; grpc5: rocketmq-client-java 5.0.x).
 *
 * - `javaSkipReason()` says why the interop tests must be skipped (no `java` or no `mvn` on PATH);
 *   in CI (CI=true) it throws instead.
 * - `buildPeer(name)` compiles a peer once per source version: the output goes to
 *   `<tmpdir>/tsmq-interop-java/<name>-<sha1 of pom + sources>/` (classes/, lib/), guarded by a
 *   lock directory so parallel test files share one build. Maven runs offline first
 *   (`mvn -B -q -o`), then online when the local repository (~/.m2) lacks something.
 * - `runJava(peer, mainClass, args)` runs a program with the JVM flags Apache's store needs on
 *   Java 17 and returns stdout parsed as JSON lines.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withBuildLock } from './build-lock.js';

export const JAVA_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', 'java');

export type PeerName = 'rocketmq4' | 'rocketmq5-store' | 'rocketmq5' | 'grpc5';

const PEER_DIRS: Record<PeerName, { pom: string; sources: string[] }> = {
  /** Apache RocketMQ 4.9.8 store, remoting client and admin tools; src/mqadmin holds the mqadmin runner. */
  rocketmq4: { pom: join(JAVA_ROOT, 'pom.xml'), sources: [join(JAVA_ROOT, 'src')] },
  'rocketmq5-store': {
    pom: join(JAVA_ROOT, 'store5', 'pom.xml'),
    sources: [join(JAVA_ROOT, 'store5', 'src'), join(JAVA_ROOT, 'src', 'shared')],
  },
  /** Apache RocketMQ 5.3.3 remoting client + admin tools (mqadmin's MQAdminStartup). */
  rocketmq5: {
    pom: join(JAVA_ROOT, 'rocketmq5', 'pom.xml'),
    sources: [join(JAVA_ROOT, 'rocketmq5', 'src'), join(JAVA_ROOT, 'src', 'shared'), join(JAVA_ROOT, 'src', 'mqadmin')],
  },
  /** rocketmq-client-java 5.0.x, the RocketMQ 5 gRPC client. */
  grpc5: {
    pom: join(JAVA_ROOT, 'grpc5', 'pom.xml'),
    sources: [join(JAVA_ROOT, 'grpc5', 'src'), join(JAVA_ROOT, 'src', 'shared')],
  },
};

/** JVM flags: Apache's MappedFile unmaps buffers through JDK internals (needs opens on Java 17). */
export const JVM_FLAGS = [
  '--add-opens=java.base/java.nio=ALL-UNNAMED',
  '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED',
  '--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED',
  '--add-opens=java.base/java.lang=ALL-UNNAMED',
  '--add-opens=java.base/java.util=ALL-UNNAMED',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-Xss512k',
  '-Drocketmq.client.logUseSlf4j=true',
  '-Drocketmq.client.rebalance.waitInterval=1000',
];

export interface BuiltPeer {
  name: PeerName;
  classpath: string;
  buildDir: string;
  /** How the build went: 'cached', 'offline' or 'online', and how long it took. */
  how: string;
  ms: number;
}

let skipReasonCache: string | false | undefined;

/**
 * Why the interop tests cannot run here, or false when `java` and `mvn` are available.
 * @throws Error in CI (env CI=true) when `java` (17+) or `mvn` is missing: `.ci/run` installs
 *   them, and an interop test must fail there, never skip silently (as etcd and Go).
 */
export function javaSkipReason(): string | false {
  if (skipReasonCache !== undefined) return skipReasonCache;
  if (process.env.TSMQ_SKIP_INTEROP === '1') return (skipReasonCache = 'TSMQ_SKIP_INTEROP=1');
  const reason = javaMissingReason();
  if (reason && process.env.CI === 'true') throw new Error(`Java interop tests cannot run: ${reason.replace(/^interop tests skipped: /, '')} (in CI, CI=true, they fail instead of skipping)`);
  return (skipReasonCache = reason);
}

function javaMissingReason(): string | false {
  const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (java.error || java.status !== 0) return 'interop tests skipped: `java` (JDK 17+) is not on PATH';
  const version = /version "(\d+)/.exec(`${java.stderr}${java.stdout}`);
  if (version && Number(version[1]) < 17) return `interop tests skipped: \`java\` is version ${version[1]}, the peers need JDK 17+`;
  const mvn = spawnSync('mvn', ['-v'], { encoding: 'utf8' });
  if (mvn.error || mvn.status !== 0) return 'interop tests skipped: `mvn` (Maven 3.6+) is not on PATH';
  return false;
}

function listFiles(dir: string, out: string[]): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) listFiles(p, out);
    else out.push(p);
  }
}

function sourceHash(peer: PeerName): string {
  const h = createHash('sha1');
  const files = [PEER_DIRS[peer].pom];
  for (const d of PEER_DIRS[peer].sources) listFiles(d, files);
  for (const f of files) {
    h.update(relative(JAVA_ROOT, f));
    h.update(readFileSync(f));
  }
  return h.digest('hex').slice(0, 16);
}

function runMaven(cwd: string, args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('mvn', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const builds = new Map<PeerName, Promise<BuiltPeer>>();

/** Compiles a peer (once per source version, shared by all test processes). @throws Error with Maven's output. */
export function buildPeer(peer: PeerName): Promise<BuiltPeer> {
  let p = builds.get(peer);
  if (!p) {
    p = doBuild(peer);
    builds.set(peer, p);
  }
  return p;
}

async function doBuild(peer: PeerName): Promise<BuiltPeer> {
  const started = Date.now();
  const root = join(tmpdir(), 'tsmq-interop-java');
  mkdirSync(root, { recursive: true });
  const buildDir = join(root, `${peer}-${sourceHash(peer)}`);
  const stamp = join(buildDir, 'build-ok');
  const result = (how: string): BuiltPeer => ({
    name: peer,
    buildDir,
    classpath: `${join(buildDir, 'classes')}:${join(buildDir, 'lib', '*')}`,
    how,
    ms: Date.now() - started,
  });
  if (existsSync(stamp)) return result('cached');
  return await withBuildLock(`${buildDir}.lock`, async () => {
    if (existsSync(stamp)) return result('cached');
    const cwd = dirname(PEER_DIRS[peer].pom);
    const goals = ['-B', '-q', `-Diop.buildDir=${buildDir}`, 'compile', 'dependency:copy-dependencies'];
    const offline = await runMaven(cwd, ['-o', ...goals], 5 * 60_000);
    let how = 'offline';
    if (offline.code !== 0) {
      how = 'online';
      const online = await runMaven(cwd, goals, 8 * 60_000);
      if (online.code !== 0) {
        throw new Error(`Maven build of the ${peer} interop peer failed (offline, then online):\n${online.output.slice(-6000)}`);
      }
    }
    writeFileSync(stamp, `${new Date().toISOString()} ${how}\n`);
    return result(how);
  });
}

export interface JavaRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout lines that parse as JSON objects. */
  lines: Array<Record<string, unknown>>;
  ms: number;
}

/** Runs `mainClass` of a built peer; never throws for a non-zero exit (check `.code`). */
export function runJava(peer: BuiltPeer, mainClass: string, args: string[], opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv; cwd?: string; /** extra JVM flags, e.g. -Dtls.enable=true */ jvmArgs?: string[] } = {}): Promise<JavaRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn('java', [...JVM_FLAGS, ...(opts.jvmArgs ?? []), '-cp', peer.classpath, mainClass, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...opts.env },
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
      if (stderr.length > 400_000) stderr = stderr.slice(-200_000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const lines: Array<Record<string, unknown>> = [];
      for (const l of stdout.split('\n')) {
        if (!l.startsWith('{')) continue;
        try {
          lines.push(JSON.parse(l) as Record<string, unknown>);
        } catch {
          /* not JSON: ignore */
        }
      }
      resolve({ code, stdout, stderr, lines, ms: Date.now() - started });
    });
  });
}

/** Fails with the program's stderr when it exited non-zero. */
export function assertRanOk(run: JavaRun, what: string): void {
  if (run.code !== 0) {
    throw new Error(`${what} exited with ${run.code}\n--- stderr (tail) ---\n${run.stderr.slice(-4000)}\n--- stdout (tail) ---\n${run.stdout.slice(-2000)}`);
  }
}
