// Produce and consume through a running tsmq (`npm start`) with the unmodified ali-ons client.
// Usage: node examples/ali-ons-quickstart.mjs [nameserver host:port] [message count]
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Producer, Consumer, Message } = require('ali-ons');

const nameSrv = process.argv[2] ?? '127.0.0.1:9876';
const count = Number(process.argv[3] ?? 100);
const topic = 'QuickStartTopic';
const quiet = { info() {}, debug() {}, warn() {}, error: console.error };

const producer = new Producer({ httpclient: {}, nameSrv, producerGroup: 'PID_QUICKSTART', logger: quiet });
await producer.ready();
const runId = Date.now().toString(36);
let produced = 0;
const notOk = new Map(); // sendStatus -> count (SLAVE_NOT_AVAILABLE from a SYNC_MASTER without a slave, ...)
for (let i = 0; i < count; i++) {
  const msg = new Message(topic, i % 2 === 0 ? 'TagA' : 'TagB', Buffer.from(`hello tsmq #${i}`));
  msg.keys = [`${runId}-${i}`];
  const r = await producer.send(msg);
  if (r.sendStatus === 'SEND_OK') produced++;
  else notOk.set(r.sendStatus, (notOk.get(r.sendStatus) ?? 0) + 1);
}
console.log(`produced ${produced} messages to ${topic}`);
for (const [status, n] of notOk) {
  // the message is stored in these cases too; the status is about replication or the disk
  console.log(`${n} send(s) answered ${status}${status === 'SLAVE_NOT_AVAILABLE' ? ': a SYNC_MASTER without a slave in sync (examples/ha/README.md)' : ''}; not counted`);
}

const consumer = new Consumer({
  httpclient: {},
  nameSrv,
  consumerGroup: 'GID_QUICKSTART',
  consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  logger: quiet,
});
const seen = new Set();
consumer.subscribe(topic, '*', async (msg) => {
  const key = (msg.keys ?? '').split(' ')[0]; // ali-ons exposes KEYS as the raw space-separated string
  if (key.startsWith(runId)) seen.add(key);
});
await consumer.ready();
const deadline = Date.now() + 60_000;
while (seen.size < produced && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
console.log(`consumed ${seen.size} of them`);
await consumer.close();
await producer.close();
process.exit(seen.size === produced ? 0 : 1);
