/**
 * Child-process entry of the runner: loads one benchmark file, runs it with the context the
 * parent wrote to a JSON file, and writes the outcome to another JSON file.
 *
 *   node --import tsx bench/lib/child-main.ts <bench file> <context.json> <result.json>
 *
 * A `BenchSkip` becomes `{ skipped }`, any other error `{ error }`; the exit code is 0 either way
 * (the parent treats a missing result file as a crash).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { BenchContext, BenchOutput } from './types.js';

interface ChildInput {
  name: string;
  ctx: Omit<BenchContext, 'log'>;
}

async function main(): Promise<void> {
  const [file, ctxPath, outPath] = process.argv.slice(2);
  if (!file || !ctxPath || !outPath) throw new Error('usage: child-main <bench file> <context.json> <result.json>');
  const input = JSON.parse(readFileSync(ctxPath, 'utf8')) as ChildInput;
  const ctx: BenchContext = {
    ...input.ctx,
    log: (m: string) => process.stderr.write(`  [${input.name}] ${m}\n`),
  };
  let out: { output?: BenchOutput; skipped?: string; error?: string };
  try {
    const mod = (await import(pathToFileURL(file).href)) as { run?: (c: BenchContext) => Promise<BenchOutput> };
    if (typeof mod.run !== 'function') throw new Error(`${file} does not export run(ctx)`);
    out = { output: await mod.run(ctx) };
  } catch (err) {
    const e = err as Error;
    if (e?.name === 'BenchSkip') out = { skipped: e.message };
    else out = { error: e?.stack ?? String(err) };
  }
  writeFileSync(outPath, JSON.stringify(out));
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`child-main: ${String((err as Error)?.stack ?? err)}\n`);
  process.exit(1);
});
