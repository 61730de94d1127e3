/**
 * "Port already in use" explained for `tsmq start|broker|namesrv`: which port, which setting
 * changes it, and — on Linux — which process listens there (its pid and command line, from the
 * LISTEN sockets of /proc/net/tcp{,6} and the socket inodes under /proc/<pid>/fd) and whether
 * that process also holds the store (its `lock` file). Instead of Node's bare
 * `listen EADDRINUSE: address already in use 127.0.0.1:9876`.
 *
 * Another user's process cannot be looked into (its /proc/<pid>/fd is not readable): then the
 * message says so and how to find it (`ss -ltnp`).
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { procProbe } from '../store/recovery/process-identity.js';
import { judgeLockRecord, parseLockRecord } from '../store/recovery/store-files.js';
import { resolveMetricsConfig } from '../metrics/metrics-config.js';

/** One listener of the command: its port, what it is and the setting that changes it. */
export interface PortRole {
  port: number;
  /** e.g. 'nameserver', 'broker remoting' */
  what: string;
  /** e.g. '-n <host:port>', '-p <port> or listenPort' */
  setting: string;
}

export interface PortHolder {
  pid: number;
  /** Command line, arguments joined by spaces ('' when unreadable). */
  command: string;
}

/** A `listen` error for an address in use: Node's EADDRINUSE (with `port`), or grpc-js's wrapper naming it in its message. */
export function isAddressInUse(err: unknown): err is Error & { port?: number; address?: string } {
  return err instanceof Error && ((err as { code?: string }).code === 'EADDRINUSE' || /EADDRINUSE/.test(err.message));
}

/** Socket inodes listening on `port` (any address) per /proc/net/tcp and tcp6; [] when unreadable. */
function listeningInodes(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const out: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      if (f.length < 10 || f[3] !== '0A') continue; // 0A = LISTEN
      if (f[1]!.split(':')[1] === hexPort) out.push(f[9]!);
    }
  }
  return out;
}

/** The process listening on TCP `port`, or null (not Linux, another user's process, or none). */
export function findPortHolder(port: number): PortHolder | null {
  const inodes = new Set(listeningInodes(port).map((i) => `socket:[${i}]`));
  if (inodes.size === 0) return null;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return null;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (!inodes.has(target)) continue;
      let command = '';
      try {
        command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      } catch {
        // exited meanwhile
      }
      return { pid: Number(pid), command };
    }
  }
  return null;
}

/** pid of the live process holding the store at `root` (its lock file), or null. */
export function storeHolderPid(root: string): number | null {
  const lock = join(root, 'lock');
  if (!existsSync(lock)) return null;
  try {
    const verdict = judgeLockRecord(parseLockRecord(readFileSync(lock, 'utf8')), procProbe);
    return verdict.held ? verdict.pid : null;
  } catch {
    return null;
  }
}

/**
 * The message for an EADDRINUSE `err` of `command` (e.g. 'tsmq start'), naming the port's role
 * and setting from `roles`, the holder process when found, and whether it holds `storeRoot`.
 */
export function portInUseMessage(err: Error & { port?: number; address?: string }, command: string, roles: PortRole[], storeRoot?: string, find: (port: number) => PortHolder | null = findPortHolder): string {
  const port = err.port ?? Number(/address already in use \S*?:(\d+)/.exec(err.message)?.[1] ?? NaN);
  const role = roles.find((r) => r.port === port);
  const what = role ? `port ${port} (${role.what}; set by ${role.setting})` : `port ${port}`;
  const holder = Number.isFinite(port) ? find(port) : null;
  const lines: string[] = [];
  if (holder) {
    const storePid = storeRoot ? storeHolderPid(storeRoot) : null;
    const store = storeRoot && storePid === holder.pid ? `, which also holds the store ${storeRoot}` : '';
    lines.push(`${command}: ${what} is already in use by process ${holder.pid}${holder.command ? ` (${holder.command})` : ''}${store}.`);
    lines.push(/tsmq|main\.js|main\.ts|mqnamesrv|mqbroker|rocketmq/i.test(holder.command) ? `A broker or nameserver is already running there: stop it (kill ${holder.pid}), or give this one other ports.` : 'Stop that process, or give this one other ports.');
  } else {
    lines.push(`${command}: ${what} is already in use by another process (not found under /proc: another user's process, or not Linux; \`ss -ltnp 'sport = :${port}'\` shows it).`);
    lines.push('Stop that process, or give this one other ports.');
  }
  if (roles.length > 0) lines.push(`Ports of ${command}: ${roles.map((r) => `${r.what} ${r.port} (${r.setting})`).join(', ')}${storeRoot ? `; a second instance also needs its own --store (this one: ${storeRoot})` : ''}.`);
  return lines.join('\n');
}

/**
 * The broker's listeners from raw broker.conf values (RocketMQ defaults: haListenPort = listenPort
 * + 1; gRPC 8081 when on), plus the console (consolePort, when ≥ 0; the command's default must be
 * in `cfg`) and the metrics endpoint (metricsPromExporterPort, default 5557, when
 * metricsExporterType=PROM and the port is not -1). Port 0 (any free port) is left out.
 * @throws ConfigError for a bad metrics key (as the start would).
 */
export function brokerPortRoles(cfg: Record<string, string | undefined>, opts: { listenFlag: string; grpc: boolean }): PortRole[] {
  const listen = Number(cfg.listenPort ?? 10911);
  const ha = cfg.haListenPort !== undefined && Number(cfg.haListenPort) >= 0 ? Number(cfg.haListenPort) : listen + 1;
  const roles: PortRole[] = [
    { port: listen, what: 'broker remoting', setting: `${opts.listenFlag} <port> or listenPort=<port>` },
    { port: ha, what: 'HA replication', setting: '-o haListenPort=<port>, default listenPort + 1' },
  ];
  const grpc = Number(cfg.grpcListenPort ?? cfg.grpcServerPort ?? 8081);
  if (opts.grpc && grpc > 0) roles.push({ port: grpc, what: 'gRPC', setting: '-o grpcListenPort=<port>, -1 for none' });
  const consolePort = Number(cfg.consolePort ?? -1);
  if (consolePort > 0) roles.push({ port: consolePort, what: 'console', setting: '-o consolePort=<port>, -1 for none' });
  const defined = Object.fromEntries(Object.entries(cfg).filter((e): e is [string, string] => e[1] !== undefined));
  const metrics = resolveMetricsConfig(defined);
  if (metrics.enabled && metrics.port > 0) roles.push({ port: metrics.port, what: 'metrics', setting: '-o metricsPromExporterPort=<port>, -1 for none' });
  return roles;
}

/** Prints the explanation of an EADDRINUSE and exits 1; rethrows anything else. */
export function exitOnPortInUse(err: unknown, command: string, roles: PortRole[], storeRoot?: string): never {
  if (!isAddressInUse(err)) throw err;
  console.error(portInUseMessage(err, command, roles, storeRoot));
  process.exit(1);
}
