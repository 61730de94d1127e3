/**
 * Summarises a profile written by bench/lib/alloc-sampler.ts: sampled bytes allocated per unit
 * (e.g. per message: pass the number of messages the process handled), by allocating function
 * (the innermost JS frame after inlining, so a callee inlined into its caller counts there) and
 * by the innermost three frames.
 *
 * Usage: npx tsx bench/lib/alloc-summary.ts <profile> [units=1] [top=25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

const [file, unitsArg, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: alloc-summary.ts <profile> [units] [top]');
const units = Number(unitsArg ?? 1);
const top = Number(topArg ?? 25);
const head = (JSON.parse(readFileSync(file, 'utf8')) as { head: ProfileNode }).head;
const byFunction = new Map<string, number>();
const byStack = new Map<string, number>();
let total = 0;
const walk = (n: ProfileNode, path: string[]): void => {
  const f = n.callFrame;
  const name = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}`;
  const here = [...path, name];
  if (n.selfSize > 0) {
    total += n.selfSize;
    byFunction.set(name, (byFunction.get(name) ?? 0) + n.selfSize);
    const k = here.slice(-3).join(' < ');
    byStack.set(k, (byStack.get(k) ?? 0) + n.selfSize);
  }
  for (const c of n.children) walk(c, here);
};
walk(head, []);
const rows = (m: Map<string, number>): string =>
  [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `${(v / units).toFixed(0).padStart(8)} B  ${k}`).join('\n');
console.log(`sampled ${(total / 1048576).toFixed(0)} MB in all, ${(total / units).toFixed(0)} B per unit (${units} units)`);
console.log(`by allocating function:\n${rows(byFunction)}`);
console.log(`by innermost frames:\n${rows(byStack)}`);
