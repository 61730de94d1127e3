/**
 * Debian's redis-server as a benchmark peer: installed with apt-get when missing, started on a
 * free loopback port with a temp dir, `appendonly yes`, `appendfsync everysec`, no RDB snapshots.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { BenchChild } from './child.js';
import { freePort } from './os.js';
import { BenchSkip } from './types.js';

function which(cmd: string): string | null {
  try {
    return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** Path of redis-server, installing the Debian package if needed; BenchSkip when impossible. */
export function ensureRedisServer(log: (m: string) => void): string {
  const found = which('redis-server');
  if (found) return found;
  log('redis-server missing: apt-get install -y redis-server');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const attempt = (args: string[]): boolean => {
    try {
      execFileSync('apt-get', args, { stdio: ['ignore', 'ignore', 'pipe'], env, timeout: 300_000 });
      return true;
    } catch {
      return false;
    }
  };
  if (!attempt(['install', '-y', '--no-install-recommends', 'redis-server'])) {
    log('install failed, running apt-get update first');
    attempt(['update']);
    attempt(['install', '-y', '--no-install-recommends', 'redis-server']);
  }
  const after = which('redis-server');
  if (!after) throw new BenchSkip('redis-server is not installed and `apt-get install -y redis-server` failed');
  return after;
}

export interface RedisPeer {
  port: number;
  child: BenchChild;
  version: string;
}

export async function startRedis(bin: string, dir: string): Promise<RedisPeer> {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const args = [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--dir', dir,
    '--appendonly', 'yes',
    '--appendfsync', 'everysec',
    '--save', '',
    '--daemonize', 'no',
    '--protected-mode', 'no',
    '--logfile', '',
  ];
  const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const child = BenchChild.wrap(proc, 'redis-server');
  await child.waitFor(/Ready to accept connections/, 20_000);
  let version = 'unknown';
  try {
    version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    /* keep unknown */
  }
  return { port, child, version };
}
