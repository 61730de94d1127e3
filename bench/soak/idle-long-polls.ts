// Soak scenario 3: many idle connections holding PULL and POP long polls (raw remoting frames, as the
// 4.x/5.x clients send them), wake-up correctness (every held pull gets every message of its queue
// once, in order; every popped message is delivered to one popper once and acked), then every
// connection goes away at once. Prints a JSON line of counters per round.
// usage: node --import tsx bench/soak/idle-long-polls.ts <broker> <pullConns> <popConns> <seconds> <sendEverySec>
import { RawRemotingClient } from '../lib/remoting-client.js';
import { decodeRecord } from '../../src/common/message/record-codec.js';
import { encodeProperties as encodeMessageProperties } from '../../src/common/message/properties.js';

const [broker = '127.0.0.1:20911', nPullS = '1500', nPopS = '500', secsS = '300', everyS = '20'] = process.argv.slice(2);
const nPull = Number(nPullS), nPop = Number(nPopS), secs = Number(secsS), every = Number(everyS);
const TOPIC = 'IdleTopic', QUEUES = 8;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let stopping = false;
const stats = { pullReplies: 0, pullFound: 0, pullMsgs: 0, pullNotFound: 0, pullOther: 0, gaps: 0, dups: 0, popReplies: 0, popMsgs: 0, popNotFound: 0, popOther: 0, acks: 0, ackFail: 0, errors: 0, sent: 0, wakeLatMs: [] as number[] };
const sentAt = new Map<string, number>();
const popSeen = new Map<string, number>();

async function pullLoop(c: RawRemotingClient, i: number, startOffsets: number[]) {
  const q = i % QUEUES; const group = `IDLE_PULL_G${i % 20}`;
  let offset = startOffsets[q]!;
  while (!stopping) {
    try {
      const r = await c.invoke(11, { consumerGroup: group, topic: TOPIC, queueId: q, queueOffset: offset, maxMsgNums: 32, sysFlag: 2 | 4, commitOffset: 0, suspendTimeoutMillis: 15000, subscription: '*', subVersion: 0, expressionType: 'TAG' });
      stats.pullReplies++;
      if (r.code === 0) {
        stats.pullFound++;
        let p = 0; const now = Date.now();
        while (p < r.body.length) { const m = decodeRecord(r.body, p); p += m.storeSize;
          if (m.queueOffset !== offset) { if (m.queueOffset > offset) stats.gaps++; else stats.dups++; }
          offset = m.queueOffset + 1; stats.pullMsgs++;
          const k = m.properties.get('KEYS'); const t = k ? sentAt.get(k) : undefined; if (t && stats.wakeLatMs.length < 200000) stats.wakeLatMs.push(now - t);
        }
        offset = Number(r.extFields.nextBeginOffset);
      } else if (r.code === 19 || r.code === 20) { stats.pullNotFound++; offset = Number(r.extFields.nextBeginOffset ?? offset); }
      else { stats.pullOther++; if (stats.pullOther < 5) console.log('pull code', r.code, r.remark); await sleep(1000); }
    } catch (e) { if (!stopping) { stats.errors++; if (stats.errors < 5) console.log('pull err', (e as Error).message); } return; }
  }
}

async function popLoop(c: RawRemotingClient, i: number) {
  while (!stopping) {
    try {
      const r = await c.invoke(200050, { consumerGroup: 'IDLE_POP_G', topic: TOPIC, queueId: -1, maxMsgNums: 1, invisibleTime: 60000, pollTime: 20000, bornTime: Date.now(), initMode: 1, expType: 'TAG', exp: '*', order: false });
      stats.popReplies++;
      if (r.code === 0) {
        let p = 0; const ck = new Map<number, string>();
        for (const e of String(r.extFields.startOffsetInfo ?? '').split(';')) { const f = e.split(' '); if (f.length === 3) ck.set(Number(f[1]), f[2]!); }
        while (p < r.body.length) { const m = decodeRecord(r.body, p); p += m.storeSize; stats.popMsgs++;
          const k = m.properties.get('KEYS') ?? '?'; popSeen.set(k, (popSeen.get(k) ?? 0) + 1);
          // the client builds POP_CK (Apache ExtraInfoUtil) from the reply header
          const extraInfo = `${ck.get(m.queueId) ?? m.queueOffset} ${r.extFields.popTime} ${r.extFields.invisibleTime} ${r.extFields.reviveQid} 0 broker-a ${m.queueId} ${m.queueOffset}`;
          const a = await c.invoke(200051, { consumerGroup: 'IDLE_POP_G', topic: TOPIC, queueId: m.queueId, extraInfo, offset: m.queueOffset });
          if (a.code === 0) stats.acks++; else { stats.ackFail++; if (stats.ackFail < 5) console.log('ack', a.code, a.remark); }
        }
      } else if (r.code === 19 || r.code === 20 || r.code === 21 || r.code === 210) stats.popNotFound++;
      else { stats.popOther++; if (stats.popOther < 5) console.log('pop code', r.code, r.remark); await sleep(1000); }
    } catch (e) { if (!stopping) { stats.errors++; if (stats.errors < 5) console.log('pop err', (e as Error).message); } return; }
  }
}

const admin = await RawRemotingClient.connect(broker);
let r = await admin.invoke(17, { topic: TOPIC, defaultTopic: 'TBW102', readQueueNums: QUEUES, writeQueueNums: QUEUES, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false, attributes: '' });
console.log('create topic', r.code, r.remark);
const starts: number[] = [];
for (let q = 0; q < QUEUES; q++) { const m = await admin.invoke(30, { topic: TOPIC, queueId: q }); starts.push(Number(m.extFields.offset)); }
const clients: RawRemotingClient[] = [];
const loops: Promise<void>[] = [];
const t0 = Date.now();
for (let i = 0; i < nPull + nPop; i++) {
  const c = await RawRemotingClient.connect(broker); clients.push(c);
  if (i < nPull) {
    if (i % 2 === 0) await c.invoke(34, {}, Buffer.from(JSON.stringify({ clientID: `idle-${i}`, producerDataSet: [], consumerDataSet: [{ groupName: `IDLE_PULL_G${i % 20}`, consumeType: 'CONSUME_ACTIVELY', messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET', subscriptionDataSet: [{ topic: TOPIC, subString: '*', tagsSet: [], codeSet: [], subVersion: Date.now(), expressionType: 'TAG', classFilterMode: false }], unitMode: false }] })));
    loops.push(pullLoop(c, i, starts));
  } else {
    if (i % 2 === 0) await c.invoke(34, {}, Buffer.from(JSON.stringify({ clientID: `idlepop-${i}`, producerDataSet: [], consumerDataSet: [{ groupName: 'IDLE_POP_G', consumeType: 'CONSUME_POP', messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET', subscriptionDataSet: [{ topic: TOPIC, subString: '*', tagsSet: [], codeSet: [], subVersion: Date.now(), expressionType: 'TAG', classFilterMode: false }], unitMode: false }] })));
    loops.push(popLoop(c, i));
  }
  if (i % 100 === 99) await sleep(50);
}
console.log(`opened ${clients.length} connections in ${Date.now() - t0} ms`);
// keep heartbeats alive for the registered ones every 30 s (as clients do) and send a few messages every `every` s
const deadline = Date.now() + secs * 1000; let n = 0;
while (Date.now() < deadline) {
  await sleep(every * 1000);
  for (let k = 0; k < QUEUES * 2; k++) {
    const key = `idle-msg-${n++}`; const props = encodeMessageProperties(new Map([['KEYS', key], ['TAGS', 'T'], ['UNIQ_KEY', key]]));
    sentAt.set(key, Date.now());
    const s = await admin.invoke(310, { a: 'PG_IDLE', b: TOPIC, c: 'TBW102', d: 4, e: k % QUEUES, f: 0, g: Date.now(), h: 0, i: props, j: 0, k: false, m: false }, Buffer.from('x'));
    if (s.code === 0) stats.sent++; else console.log('send', s.code, s.remark);
  }
  const lat = [...stats.wakeLatMs].sort((a, b) => a - b);
  console.log(JSON.stringify({ t: Math.round((Date.now() - t0) / 1000), ...stats, wakeLatMs: undefined, lat50: lat[lat.length >> 1], lat99: lat[Math.floor(lat.length * 0.99)], latMax: lat[lat.length - 1], popUnique: popSeen.size, popDup: [...popSeen.values()].filter((v) => v > 1).length }));
  if (Date.now() - t0 > 25_000) for (let i = 0; i < clients.length; i += 2) void clients[i]!.invoke(34, {}, Buffer.from(JSON.stringify({ clientID: i < nPull ? `idle-${i}` : `idlepop-${i}`, producerDataSet: [], consumerDataSet: [{ groupName: i < nPull ? `IDLE_PULL_G${i % 20}` : 'IDLE_POP_G', consumeType: i < nPull ? 'CONSUME_ACTIVELY' : 'CONSUME_POP', messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET', subscriptionDataSet: [{ topic: TOPIC, subString: '*', tagsSet: [], codeSet: [], subVersion: 1, expressionType: 'TAG', classFilterMode: false }], unitMode: false }] }))).catch(() => {});
}
await sleep(3000);
const expectPull = stats.sent / QUEUES * 0 + (stats.sent) * (nPull / QUEUES);
console.log(JSON.stringify({ final: true, expectedPullMsgs: expectPull, ...stats, wakeLatMs: undefined, popUnique: popSeen.size }));
console.log('all connections go away at once');
stopping = true;
for (const c of clients) c.close();
admin.close();
process.exit(0);
