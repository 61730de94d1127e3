/**
 * Turns a run's results into the Markdown report (bench/results/latest.md): machine info, one
 * table row per metric with its same-run reference, ratio and target, then each benchmark's notes.
 */
import { round3 } from './stats.js';
import type { BenchResult, Metric, RunReport, Target } from './types.js';

/** Fills `ratio` and `met` of a metric from its reference and target. */
export function evaluateMetric(m: Metric): Metric {
  const out = { ...m };
  if (out.reference && out.value !== null && out.reference.value !== 0 && Number.isFinite(out.reference.value)) {
    out.ratio = out.value / out.reference.value;
  }
  if (out.target && !(out.target.on === 'ratio' && out.ratio === undefined && out.value !== null)) {
    // A ratio target without its same-run reference (e.g. `--skip disk`) stays unevaluated.
    const x = out.target.on === 'ratio' ? out.ratio : out.value;
    out.met = x === undefined || x === null || !Number.isFinite(x) ? false : out.target.op === '>=' ? x >= out.target.limit : x <= out.target.limit;
  }
  return out;
}

export function fmtNum(x: number | null | undefined): string {
  if (x === null || x === undefined || Number.isNaN(x)) return 'n/a';
  const r = round3(x);
  return Math.abs(r) >= 1000 ? r.toLocaleString('en-US') : String(r);
}

function fmtTarget(t: Target | undefined, unit: string): string {
  if (!t) return '';
  const op = t.op === '>=' ? '≥' : '≤';
  return t.on === 'ratio' ? `${op} ${fmtNum(t.limit)}× ref` : `${op} ${fmtNum(t.limit)} ${unit}`;
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function renderMarkdown(report: RunReport): string {
  const m = report.machine;
  const lines: string[] = [];
  lines.push(`# tsmq benchmark results (${report.mode} mode)`);
  lines.push('');
  lines.push(`- date: ${m.date}`);
  lines.push(`- machine: ${m.cores} cores (${m.cpuModel}), ${m.ramGiB} GiB RAM, ${m.platform}, kernel ${m.kernel}`);
  lines.push(`- disk: ${m.disk}`);
  lines.push(`- node ${m.node}, commit ${m.gitCommit ?? 'unknown'}`);
  lines.push(`- command: \`npm run bench -- ${report.argv.join(' ')}\``);
  lines.push(
    `- load average (1 min) before the run: ${m.loadAvgAtStart}${m.loadAvgAtStart > 0.5 ? ' — **the machine was busy with other work; absolute figures are depressed and noisy, compare within rows of the same benchmark**' : ''}`,
  );
  lines.push('');
  lines.push('| Benchmark | Metric | Value | Same-run reference | Ratio | Target | Met |');
  lines.push('|---|---|---:|---|---:|---|:---:|');
  for (const r of report.results) {
    if (r.skipped || r.error) {
      const why = r.skipped ? `skipped: ${r.skipped}` : `error: ${(r.error ?? '').split('\n')[0]}`;
      lines.push(`| ${r.name} | ${cell(why)} | | | | | |`);
    }
    for (const x of r.metrics) {
      const ref = x.reference ? `${x.reference.label}: ${fmtNum(x.reference.value)} ${x.reference.unit}` : '';
      const ratio = x.ratio !== undefined ? `${fmtNum(x.ratio)}×` : '';
      const met = x.met === undefined ? '' : x.met ? 'yes' : '**no**';
      const value = `${fmtNum(x.value)} ${x.unit}`;
      lines.push(`| ${r.name} | ${cell(x.name + (x.note ? ` (${x.note})` : ''))} | ${value} | ${cell(ref)} | ${ratio} | ${fmtTarget(x.target, x.unit)} | ${met} |`);
    }
  }
  lines.push('');
  for (const r of report.results) lines.push(...renderNotes(r));
  return lines.join('\n') + '\n';
}

function renderNotes(r: BenchResult): string[] {
  const load = r.loadAvgAtStart !== undefined ? ` Load average at its start: ${r.loadAvgAtStart}.` : '';
  const out = [`### ${r.name}: ${r.title}`, '', `Ran ${fmtNum(r.durationMs / 1000)} s.${load}`];
  if (r.skipped) out.push(`Skipped: ${r.skipped}`);
  if (r.error) out.push('Error:', '```', r.error.split('\n').slice(0, 12).join('\n'), '```');
  for (const n of r.notes ?? []) out.push(`- ${n}`);
  out.push('');
  return out;
}

/** A compact plain-text table for the terminal. */
export function renderConsole(report: RunReport): string {
  const rows: string[][] = [['bench', 'metric', 'value', 'reference', 'ratio', 'target', 'met']];
  for (const r of report.results) {
    if (r.skipped || r.error) rows.push([r.name, r.skipped ? `SKIPPED: ${r.skipped}` : `ERROR: ${(r.error ?? '').split('\n')[0]}`, '', '', '', '', '']);
    for (const x of r.metrics) {
      rows.push([
        r.name,
        x.name,
        `${fmtNum(x.value)} ${x.unit}`,
        x.reference ? `${fmtNum(x.reference.value)} ${x.reference.unit}` : '',
        x.ratio !== undefined ? `${fmtNum(x.ratio)}x` : '',
        fmtTarget(x.target, x.unit),
        x.met === undefined ? '' : x.met ? 'yes' : 'NO',
      ]);
    }
  }
  const widths = rows[0]!.map((_, i) => Math.min(60, Math.max(...rows.map((row) => row[i]!.length))));
  return rows.map((row) => row.map((c, i) => c.slice(0, 60).padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n';
}
