/**
 * Builds and runs the Go test peer in test/interop/go (Apache's Go client
 * `github.com/apache/rocketmq-client-go/v2`, version pinned in its go.mod / go.sum).
 *
 * - `goSkipReason()` says why the Go interop test must be skipped: `TSMQ_SKIP_INTEROP=1`, or no
 *   `go` on PATH outside CI. In CI (`CI=true`) a missing `go` is not a reason to skip: the build
 *   then fails with a clear error.
 * - `buildGoPeer()` compiles the peer once per source version: the binary goes to
 *   `<tmpdir>/tsmq-interop-go/peer-<sha1 of go.mod + go.sum + *.go>/tsmq-go-peer`, guarded by a
 *   lock directory so parallel test files share one build. The module cache is Go's default
 *   (`go env GOMODCACHE`, filled from GOPROXY on the first build); `-mod=readonly` so a go.sum that
 *   does not match fails instead of being rewritten.
 * - `runGoPeer(peer, args)` runs a subcommand and returns stdout parsed as JSON lines.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withBuildLock } from './build-lock.js';

export const GO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', 'go');

export interface BuiltGoPeer {
  binary: string;
  /** 'cached' or 'built', and how long it took. */
  how: 'cached' | 'built';
  ms: number;
  /** `go version` of the toolchain on PATH. */
  goVersion: string;
}

export type GoLine = Record<string, unknown> & { type: string };

export interface GoRun {
  code: number | null;
  lines: GoLine[];
  stderr: string;
  ms: number;
  args: string[];
}

function goVersion(): string | null {
  const r = spawnSync('go', ['version'], { encoding: 'utf8' });
  return r.error || r.status !== 0 ? null : r.stdout.trim();
}

/** Why the Go interop test cannot run here, or false (always false in CI unless TSMQ_SKIP_INTEROP=1). */
export function goSkipReason(): string | false {
  if (process.env.TSMQ_SKIP_INTEROP === '1') return 'TSMQ_SKIP_INTEROP=1';
  if (process.env.CI === 'true') return false;
  return goVersion() === null ? 'Go interop test skipped: `go` (1.19+) is not on PATH (in CI it fails instead)' : false;
}

function sourceHash(): string {
  const h = createHash('sha1');
  const files = readdirSync(GO_ROOT).filter((f) => f === 'go.mod' || f === 'go.sum' || f.endsWith('.go')).sort();
  for (const f of files) {
    h.update(f);
    h.update(readFileSync(join(GO_ROOT, f)));
  }
  return h.digest('hex').slice(0, 16);
}

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let build: Promise<BuiltGoPeer> | undefined;

/**
 * Compiles the peer (once per source version, shared by all test processes).
 * @throws Error when `go` is missing (the message says so) or the build fails (with Go's output).
 */
export function buildGoPeer(): Promise<BuiltGoPeer> {
  build ??= (async () => {
    const started = Date.now();
    const version = goVersion();
    if (version === null) throw new Error('`go` is not on PATH: install Go 1.19+ (Debian: apt-get install golang-go) to run the Go client interop test');
    const dir = join(tmpdir(), 'tsmq-interop-go', `peer-${sourceHash()}`);
    const binary = join(dir, 'tsmq-go-peer');
    if (existsSync(binary)) return { binary, how: 'cached' as const, ms: Date.now() - started, goVersion: version };
    mkdirSync(dirname(dir), { recursive: true });
    return withBuildLock(`${dir}.lock`, async () => {
      if (existsSync(binary)) return { binary, how: 'cached' as const, ms: Date.now() - started, goVersion: version };
      mkdirSync(dir, { recursive: true });
      const partial = `${binary}.partial-${process.pid}`;
      // -buildvcs=false: the sources live in a git worktree whose metadata go need not read.
      const r = await run('go', ['build', '-mod=readonly', '-buildvcs=false', '-o', partial, '.'], {
        cwd: GO_ROOT,
        env: { ...process.env, GOFLAGS: '', GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'local', CGO_ENABLED: '0' },
        timeoutMs: 10 * 60_000,
      });
      if (r.code !== 0) throw new Error(`go build of the Go client peer failed (${r.code}) with ${version}:\n${r.stdout}${r.stderr}`);
      renameSync(partial, binary);
      return { binary, how: 'built' as const, ms: Date.now() - started, goVersion: version };
    });
  })();
  return build;
}

/**
 * Runs `tsmq-go-peer <namesrv> <subcommand> key=value...`. HOME points at a fresh temp directory
 * (the Go client keeps broadcasting offsets under $HOME/.rocketmq_client_go), the client logs at
 * warn level to stderr.
 */
export async function runGoPeer(peer: BuiltGoPeer, namesrvAddr: string, subcommand: string, opts: Record<string, string | number> = {}, timeoutMs = 60_000): Promise<GoRun> {
  const args = [namesrvAddr, subcommand, ...Object.entries(opts).map(([k, v]) => `${k}=${v}`)];
  const home = mkdtempSync(join(tmpdir(), 'tsmq-go-home-'));
  const started = Date.now();
  try {
    const r = await run(peer.binary, args, {
      env: { ...process.env, HOME: home, ROCKETMQ_GO_LOG_LEVEL: process.env.ROCKETMQ_GO_LOG_LEVEL ?? 'warn' },
      timeoutMs,
    });
    const lines: GoLine[] = [];
    for (const l of r.stdout.split('\n')) {
      if (!l.trim()) continue;
      try {
        lines.push(JSON.parse(l) as GoLine);
      } catch {
        lines.push({ type: 'unparsed', text: l });
      }
    }
    return { code: r.code, lines, stderr: r.stderr, ms: Date.now() - started, args };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** The lines of one type. */
export function linesOf(run: GoRun, type: string): GoLine[] {
  return run.lines.filter((l) => l.type === type);
}

/** A summary for assertion messages: the errors the peer reported and the tail of its stderr. */
export function explainGo(run: GoRun): string {
  const errs = linesOf(run, 'error').map((e) => `${String(e.op)}: ${String(e.message)}`);
  return `\n(${run.args.slice(1).join(' ')}; exit ${run.code}, ${run.ms} ms)${errs.length ? `\nerrors:\n  ${errs.slice(0, 15).join('\n  ')}` : ''}\nstderr (tail):\n${run.stderr.split('\n').slice(-15).join('\n')}`;
}

/** Fails unless the peer exited 0, reported its "done" line and no "error" line. */
export function assertGoRanOk(run: GoRun): void {
  const errors = linesOf(run, 'error');
  if (run.code !== 0 || errors.length > 0 || linesOf(run, 'done').length !== 1) {
    throw new Error(`the Go peer did not run cleanly${explainGo(run)}`);
  }
}
