/**
 * Runs Apache's mqadmin (MQAdminStartup of rocketmq-tools 4.9.8 or 5.3.3) against `tsmq start`:
 * one JVM (test/interop/java/src/mqadmin MqAdminRunner) executes the whole step list (Java
 * producer and push consumer kept alive between commands) and prints one JSON line per step.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../../support/tsmq-process.js';
import { assertRanOk, buildPeer, runJava, type PeerName } from '../support/java-peers.js';

export type Step =
  | { op: 'produce'; as: string; group: string; topic: string; count: number; tag: string; keyPrefix: string }
  | { op: 'consume'; group: string; topic: string; expect: number }
  | { op: 'sleep'; ms: number }
  /** Snapshot of a file (e.g. the broker's subscriptionGroup.json) at that point of the run. */
  | { op: 'readfile'; id: string; path: string }
  /** Body of an HTTP GET at that point of the run (the metrics endpoint while the Java clients are connected), in `files`. */
  | { op: 'readurl'; id: string; url: string }
  /** `id` names the result (several steps may run the same mqadmin command). */
  | { op: 'mqadmin'; id: string; args: string[] }
  /** DefaultMQAdminExt.viewBrokerStatsData (315) of one stats item; mqadmin has no sub command for it. */
  | { op: 'statsdata'; id: string; brokerAddr: string; statsName: string; statsKey: string };

/** What viewBrokerStatsData returned (sums of the minute / hour / day windows), or its refusal. */
export interface StatsDataResult {
  ok: boolean;
  minuteSum?: number;
  minuteTps?: number;
  hourSum?: number;
  daySum?: number;
  error?: string;
}

export interface CmdResult {
  name: string;
  args: string[];
  out: string;
  err: string;
  exit: number | null;
  ms: number;
}

export interface MqadminRun {
  cmds: Map<string, CmdResult>;
  sent: Map<string, Record<string, unknown>>;
  consumed: Map<string, number>;
  files: Map<string, string | null>;
  stats: Map<string, StatsDataResult>;
  /** Duration of the non-command phases: 'consume' (last consume step). */
  phaseMs: Map<string, number>;
  ms: number;
  stderr: string;
}

/** One line of the runner's steps file. */
export function stepLine(s: Step): string {
  switch (s.op) {
    case 'produce':
      return ['produce', s.as, s.group, s.topic, s.count, s.tag, s.keyPrefix].join('\t');
    case 'consume':
      return ['consume', s.group, s.topic, s.expect].join('\t');
    case 'sleep':
      return `sleep\t${s.ms}`;
    case 'readfile':
      return `readfile\t${s.id}\t${s.path}`;
    case 'readurl':
      return `readurl\t${s.id}\t${s.url}`;
    case 'mqadmin':
      return ['mqadmin', ...s.args].join('\t');
    case 'statsdata':
      return ['statsdata', s.id, s.brokerAddr, s.statsName, s.statsKey].join('\t');
  }
}

/** Runs `steps` in one JVM of `peer` against `broker`; results are keyed by step id. */
export async function runMqadmin(peerName: PeerName, broker: Pick<TsmqProcess, 'namesrvAddr'>, steps: Step[]): Promise<MqadminRun> {
  const peer = await buildPeer(peerName);
  const dir = mkdtempSync(join(tmpdir(), 'tsmq-mqadmin-steps-'));
  try {
    const file = join(dir, 'steps.tsv');
    writeFileSync(file, steps.map(stepLine).join('\n') + '\n');
    // cwd: consumerStatus writes ConsumerRunningInfo files relative to it
    const run = await runJava(peer, 'tsmq.interop.mqadmin.MqAdminRunner', [broker.namesrvAddr, file], { timeoutMs: 120_000, cwd: dir });
    assertRanOk(run, 'MqAdminRunner');
    const cmds = new Map<string, CmdResult>();
    const sent = new Map<string, Record<string, unknown>>();
    const consumed = new Map<string, number>();
    const files = new Map<string, string | null>();
    const stats = new Map<string, StatsDataResult>();
    const phaseMs = new Map<string, number>();
    const ids = steps.filter((s): s is Extract<Step, { op: 'mqadmin' }> => s.op === 'mqadmin').map((s) => s.id);
    let i = 0;
    for (const l of run.lines) {
      if (l.type === 'cmd') cmds.set(ids[i++] ?? `#${i}`, l as unknown as CmdResult);
      else if (l.type === 'sent') sent.set(l.var as string, l);
      else if (l.type === 'consumed') {
        consumed.set(l.group as string, l.count as number);
        phaseMs.set('consume', l.ms as number);
      }
      else if (l.type === 'file') files.set(l.id as string, (l.content as string | null) ?? null);
      else if (l.type === 'statsdata') stats.set(l.id as string, l as unknown as StatsDataResult);
    }
    return { cmds, sent, consumed, files, stats, phaseMs, ms: run.ms, stderr: run.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
