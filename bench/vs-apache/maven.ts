/**
 * Maven builds of bench/vs-apache's Java parts, cached in `$TMPDIR/tsmq-vs-apache-java/<name>-<hash>`
 * (hash of the sources and of the -D properties), offline first and online when that fails.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

function hashOf(base: string, paths: string[], props: Record<string, string>): string {
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
    h.update(relative(base, f));
    h.update(readFileSync(f));
  }
  h.update(JSON.stringify(props));
  return h.digest('hex').slice(0, 16);
}

/** Runs `mvn <goals>` in `pomDir` into a cached build dir and returns that dir (`classes/`, `lib/`). */
export function mavenBuild(name: string, pomDir: string, hashPaths: string[], goals: string[], props: Record<string, string> = {}): string {
  const buildDir = join(tmpdir(), 'tsmq-vs-apache-java', `${name}-${hashOf(pomDir, hashPaths, props)}`);
  const stamp = join(buildDir, 'build-ok');
  if (existsSync(stamp)) return buildDir;
  mkdirSync(buildDir, { recursive: true });
  const args = ['-B', '-q', `-Dva.buildDir=${buildDir}`, ...Object.entries(props).map(([k, v]) => `-D${k}=${v}`), ...goals];
  let r = spawnSync('mvn', ['-o', ...args], { cwd: pomDir, encoding: 'utf8' });
  if (r.status !== 0) r = spawnSync('mvn', args, { cwd: pomDir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`Maven build of ${name} failed:\n${(r.stdout + r.stderr).slice(-5000)}`);
  writeFileSync(stamp, new Date().toISOString());
  return buildDir;
}
