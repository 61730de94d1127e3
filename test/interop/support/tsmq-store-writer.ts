/**
 * Child-process writer for the store interop test: opens tsmq's DefaultMessageStore on a
 * directory and puts recipe messages [from, to), printing one JSON line per put (same shape as
 * the Java ApacheStoreWriter). Mode "clean" shuts the store down and exits; mode "crash" prints
 * {"type":"done"} and waits to be SIGKILLed by the parent (abort file left, nothing flushed
 * beyond what the store did by itself).
 *
 * Usage: node --import tsx tsmq-store-writer.ts <dir> <from> <to> <clean|crash> <sizes JSON> [long-topic]
 */
import { recipeMessage } from './recipe.js';
import { openTsmqStore, type StoreSizes } from './store-views.js';

async function main(): Promise<void> {
  const [dir, fromText, toText, mode, sizesJson, variant] = process.argv.slice(2);
  const longTopics = variant === 'long-topic';
  if (!dir || !fromText || !toText || !mode || !sizesJson) throw new Error('usage: tsmq-store-writer <dir> <from> <to> <clean|crash> <sizes JSON>');
  const sizes = JSON.parse(sizesJson) as StoreSizes;
  const store = await openTsmqStore(dir, sizes);
  const from = Number(fromText);
  const to = Number(toText);
  for (let i = from; i < to; i++) {
    const r = await store.putMessage(recipeMessage(i, longTopics));
    const a = r.appendResult;
    const line: Record<string, unknown> = { type: 'put', i, status: r.status };
    if (a) Object.assign(line, { wroteOffset: a.wroteOffset, wroteBytes: a.wroteBytes, queueOffset: a.queueOffset, msgId: a.msgId, storeTimestamp: a.storeTimestamp });
    if (r.remark) line.remark = r.remark;
    process.stdout.write(`${JSON.stringify(line)}\n`);
    if (i % 40 === 39) await new Promise((res) => setTimeout(res, 3));
  }
  if (mode === 'crash') {
    process.stdout.write(`${JSON.stringify({ type: 'done', mode, maxPhyOffset: store.getMaxPhyOffset() })}\n`);
    setInterval(() => {}, 1000); // wait for SIGKILL
    return;
  }
  const maxPhyOffset = store.getMaxPhyOffset();
  await store.shutdown();
  process.stdout.write(`${JSON.stringify({ type: 'done', mode, maxPhyOffset })}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
