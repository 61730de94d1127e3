/**
 * The one table of bench/vs-apache: per phase, Apache's and tsmq's figures, the tsmq/Apache ratio
 * and, where issue 13 sets one, the target and whether this run met it. Plain text for stdout and
 * Markdown for bench/results.
 */
import type { PhaseResult } from './phases.js';

/** Issue 13's targets, as ratios tsmq/Apache 5.3.3, keyed by phase and metric. */
export const TARGETS: Record<string, Record<string, { op: '>=' | '<='; value: number }>> = {
  single: { 'msgs/s': { op: '>=', value: 1.5 }, 'msgs / broker CPU-s': { op: '>=', value: 2 } },
  batch: { 'msgs/s': { op: '>=', value: 1.5 }, 'p50 ms': { op: '<=', value: 1.0 } },
  'consume push': { 'msgs/s': { op: '>=', value: 1.5 } },
  'consume lite pull': { 'msgs/s': { op: '>=', value: 1.5 } },
  'sync-flush': { 'msgs/s': { op: '>=', value: 1.5 }, 'p99 ms': { op: '<=', value: 0.7 } },
};

const fmt = (x: number | null | undefined, d: number): string => (x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : x.toFixed(d));

type Metric = [name: string, get: (r: PhaseResult) => number | string | null, digits: number];

const METRICS: Metric[] = [
  ['msgs/s', (r) => r.msgsPerSec, 0],
  ['p50 ms', (r) => r.latencyMs?.p50 ?? null, 3],
  ['p99 ms', (r) => r.latencyMs?.p99 ?? null, 3],
  ['p99.9 ms', (r) => r.latencyMs?.p999 ?? null, 3],
  ['broker CPU-s', (r) => r.cpu.brokerCpuSeconds, 1],
  ['generator CPU-s', (r) => r.cpu.generatorCpuSeconds, 1],
  ['msgs / broker CPU-s', (r) => r.msgsPerBrokerCpuSecond, 0],
  ['broker / generator cores used', (r) => `${fmt(r.cpu.brokerCoresUsed, 2)}/${r.cpu.brokerCores} · ${fmt(r.cpu.generatorCoresUsed, 2)}/${r.cpu.generatorCores}`, 0],
  ['other processes: cores used', (r) => r.cpu.otherCoresUsed, 2],
  ['bottleneck', (r) => r.cpu.bottleneck, 0],
  ['errors + not-OK (+ incomplete)', (r) => `${r.errors + r.notOk}${r.complete ? '' : ' INCOMPLETE'}`, 0],
  ['warm-up s (broker JIT % at end)', (r) => `${fmt(r.warmup.seconds, 0)}${r.warmup.jitShareAtEnd === null ? '' : ` (${fmt(r.warmup.jitShareAtEnd * 100, 2)} %${r.warmup.jitQuiet ? '' : ', JIT busy at cap'})`}${r.warmup.steady ? '' : ' not steady at cap'}`, 0],
];

export interface Table {
  rows: string[][];
  text: string;
  md: string;
  /** [phase, metric, ratio, target, met] of every target */
  targets: Array<{ phase: string; metric: string; ratio: number | null; target: string; met: boolean | null }>;
}

/** `phases` in display order; `apache` / `tsmq` results keyed by phase name. */
export function buildTable(apacheLabel: string, phases: string[], apache: Record<string, PhaseResult>, tsmq: Record<string, PhaseResult>): Table {
  const header = ['phase', 'metric', apacheLabel, 'tsmq', 'tsmq/Apache', 'target', 'met'];
  const rows: string[][] = [header];
  const targets: Table['targets'] = [];
  for (const phase of phases) {
    const a = apache[phase];
    const t = tsmq[phase];
    const targetKey = phase.replace(/ \(.*\)$/, '');
    for (const [name, get, d] of METRICS) {
      const av = a ? get(a) : null;
      const tv = t ? get(t) : null;
      if (av === null && tv === null) continue;
      const show = (v: number | string | null): string => (typeof v === 'string' ? v : fmt(v, d));
      const ratio = typeof av === 'number' && typeof tv === 'number' && av !== 0 && !name.startsWith('other') ? tv / av : null;
      const tg = TARGETS[targetKey]?.[name];
      let met: boolean | null = null;
      if (tg && ratio !== null && Number.isFinite(ratio)) met = tg.op === '>=' ? ratio >= tg.value : ratio <= tg.value;
      if (tg) targets.push({ phase, metric: name, ratio, target: `${tg.op} ${tg.value}×`, met });
      rows.push([phase, name, show(av), show(tv), ratio === null ? '' : fmt(ratio, 2), tg ? `${tg.op} ${tg.value}×` : '', met === null ? '' : met ? 'yes' : 'NO']);
    }
  }
  const w = header.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const text = rows.map((r) => r.map((c, i) => (i < 2 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  ')).join('\n');
  const md = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.slice(1).map((r) => `| ${r.join(' | ')} |`)].join('\n');
  return { rows, text, md, targets };
}
