/**
 * The house's import rules, checked on the source tree:
 *
 * 1. One-way imports between the top-level folders of src/ (cli → lib → console → grpc/metrics
 *    → broker/namesrv → auth → store/remoting → common): a folder imports only folders of a
 *    lower layer (and itself).
 * 2. No import cycle between files anywhere in src/ (type-only imports and re-exports count: a
 *    cycle of types is still two concepts that cannot be read apart).
 *
 * A failure names the offending import; move the shared piece down (a codec, a type, a small
 * helper) instead of importing upward.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = normalize(join(dirname(fileURLToPath(import.meta.url)), '../../../src'));

/** Layer of each top-level entry of src/; a folder may import folders of a strictly lower layer. */
const LAYER: Record<string, number> = {
  common: 0,
  remoting: 1,
  store: 1,
  auth: 2,
  broker: 3,
  namesrv: 3,
  grpc: 4,
  metrics: 4,
  console: 5,
  lib: 6,
  cli: 7,
  '(root)': 8,
};

function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listTs(p));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Relative module specifiers of `import … from`, `export … from`, `import '…'` and `import('…')`. */
function relativeImports(source: string): string[] {
  const out: string[] = [];
  const re = /(?:^|[;\s])(?:import|export)\s[^;'"]*?from\s*['"](\.[^'"]+)['"]|(?:^|[;\s])import\s*['"](\.[^'"]+)['"]|\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g;
  for (const m of source.matchAll(re)) out.push((m[1] ?? m[2] ?? m[3])!);
  return out;
}

function topOf(file: string): string {
  const first = relative(SRC, file).split(sep)[0]!;
  return first.endsWith('.ts') ? '(root)' : first;
}

const files = listTs(SRC);
const graph = new Map<string, string[]>();
for (const f of files) {
  const deps = relativeImports(readFileSync(f, 'utf8')).map((spec) => normalize(join(dirname(f), spec)).replace(/\.js$/, '.ts'));
  graph.set(f, deps);
}

test('the source tree is where the rules look (sanity: > 300 files, every top-level entry has a layer)', () => {
  assert.ok(files.length > 300, `only ${files.length} files under ${SRC}`);
  const tops = new Set(files.map(topOf));
  for (const t of tops) assert.ok(t in LAYER, `src/${t} has no layer in this test: give it one`);
  // The regex finds the imports that exist: every relative import resolves to a file.
  for (const [f, deps] of graph) {
    for (const d of deps) assert.ok(graph.has(d), `${relative(SRC, f)} imports ${relative(SRC, d)}, which is not a .ts file under src/`);
  }
});

test('top-level folders import only lower layers (cli → lib → console → grpc/metrics → broker/namesrv → auth → store/remoting → common)', () => {
  const bad: string[] = [];
  for (const [f, deps] of graph) {
    const from = topOf(f);
    for (const d of deps) {
      const to = topOf(d);
      if (to !== from && !(LAYER[to]! < LAYER[from]!)) bad.push(`${relative(SRC, f)} → ${relative(SRC, d)} (${from} may not import ${to})`);
    }
  }
  assert.deepEqual(bad, []);
});

test('no import cycle between files of src/', () => {
  // Tarjan's strongly connected components, iterative (the tree is deep enough to matter).
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work: Array<{ v: string; i: number }> = [{ v: root, i: 0 }];
    index.set(root, next); low.set(root, next); next++; stack.push(root); onStack.add(root);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const deps = graph.get(top.v) ?? [];
      if (top.i < deps.length) {
        const w = deps[top.i++]!;
        if (!graph.has(w)) continue;
        if (!index.has(w)) {
          index.set(w, next); low.set(w, next); next++; stack.push(w); onStack.add(w);
          work.push({ v: w, i: 0 });
        } else if (onStack.has(w)) {
          low.set(top.v, Math.min(low.get(top.v)!, index.get(w)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.v;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.v)!));
      }
      if (low.get(top.v) === index.get(top.v)) {
        const scc: string[] = [];
        let w: string;
        do { w = stack.pop()!; onStack.delete(w); scc.push(relative(SRC, w)); } while (w !== top.v);
        if (scc.length > 1) cycles.push(scc.sort());
      }
    }
  }
  assert.deepEqual(cycles, []);
});
