/**
 * Reads a store directory written by tsmq with the record codec and checks it byte by byte:
 * every CommitLog record is valid (magic, CRC, TOTALSIZE, PHYSICALOFFSET = its position),
 * files are chained by blank records, and every ConsumeQueue entry points at a record of its
 * topic/queue with the right size, queue offset and tags code.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkRecord } from '../../src/common/message/record-codec.js';

export interface StoreVerification {
  commitLogFiles: number;
  records: number;
  /** topic -> entries per queue id */
  queues: Map<string, number[]>;
  abortFilePresent: boolean;
}

export async function verifyStoreOnDisk(
  root: string,
  sizes: { mappedFileSizeCommitLog: number; mappedFileSizeConsumeQueue: number; delayLevelTableMs?: number[] },
): Promise<StoreVerification> {
  const clDir = join(root, 'commitlog');
  const files = readdirSync(clDir).filter((f) => /^\d{20}$/.test(f)).sort();
  const recordsAt = new Map<number, { topic: string; queueId: number; size: number; queueOffset: number; tagsCode: number }>();
  let records = 0;
  for (const name of files) {
    const base = Number(name);
    const data = readFileSync(join(clDir, name));
    if (data.length !== sizes.mappedFileSizeCommitLog) throw new Error(`${name}: size ${data.length}`);
    let pos = 0;
    while (pos < data.length) {
      if (data.readInt32BE(pos) === 0) break; // end of written data
      const r = checkRecord(data, pos, data.length - pos, { checkCrc: true, expectedPhysicalOffset: base + pos, delayLevelTableMs: sizes.delayLevelTableMs });
      if (r.kind === 'blank') break;
      if (r.kind === 'invalid') throw new Error(`${name}@${pos}: ${r.reason}`);
      const d = r.dispatch;
      recordsAt.set(base + pos, { topic: d.topic, queueId: d.queueId, size: r.size, queueOffset: d.consumeQueueOffset, tagsCode: d.tagsCode });
      records++;
      pos += r.size;
    }
  }
  const queues = new Map<string, number[]>();
  const cqRoot = join(root, 'consumequeue');
  for (const topic of existsSync(cqRoot) ? readdirSync(cqRoot) : []) {
    const perQueue: number[] = [];
    for (const qid of readdirSync(join(cqRoot, topic))) {
      let count = 0;
      for (const f of readdirSync(join(cqRoot, topic, qid)).sort()) {
        const data = readFileSync(join(cqRoot, topic, qid, f));
        const fileStartEntry = Number(f) / 20;
        for (let p = 0; p + 20 <= data.length; p += 20) {
          const phy = Number(data.readBigInt64BE(p));
          const size = data.readInt32BE(p + 8);
          const tagsCode = Number(data.readBigInt64BE(p + 12));
          if (size <= 0) break;
          const rec = recordsAt.get(phy);
          const where = `${topic}/${qid}/${f} entry ${fileStartEntry + p / 20}`;
          if (!rec) throw new Error(`${where}: no record at physical offset ${phy}`);
          if (rec.topic !== topic || rec.queueId !== Number(qid)) throw new Error(`${where}: record is ${rec.topic}/${rec.queueId}`);
          if (rec.size !== size) throw new Error(`${where}: size ${size} vs record ${rec.size}`);
          if (rec.queueOffset !== fileStartEntry + p / 20) throw new Error(`${where}: record queue offset ${rec.queueOffset}`);
          if (rec.tagsCode !== tagsCode) throw new Error(`${where}: tags code ${tagsCode} vs ${rec.tagsCode}`);
          count++;
        }
      }
      perQueue[Number(qid)] = count;
    }
    queues.set(topic, perQueue);
  }
  return { commitLogFiles: files.length, records, queues, abortFilePresent: existsSync(join(root, 'abort')) };
}
