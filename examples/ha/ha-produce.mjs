// Sends messages to the master/slave pair of examples/ha/ and prints every send's status, so a
// refused send says why instead of a bare count. Usage:
//   node examples/ha/ha-produce.mjs [nameserver host:port] [message count]
// Exit code 0 when every send is SEND_OK, 1 otherwise.
//
// Statuses a SYNC_MASTER answers (RocketMQ's SendStatus; the message is stored on the master in
// every case, the status is about the slave):
//   SEND_OK              on the master and on the slave
//   SLAVE_NOT_AVAILABLE  no slave connected, or it is more than haMaxGapNotInSync bytes behind
//   FLUSH_SLAVE_TIMEOUT  the slave did not confirm within slaveTimeout ms
//   FLUSH_DISK_TIMEOUT   SYNC_FLUSH only: the disk did not confirm within syncFlushTimeout ms
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Producer, Message } = require('ali-ons');

const nameSrv = process.argv[2] ?? '127.0.0.1:9876';
const count = Number(process.argv[3] ?? 10);
const topic = 'HaExampleTopic';
const quiet = { info() {}, debug() {}, warn() {}, error: console.error };

const WHY = {
  SLAVE_NOT_AVAILABLE:
    'stored on the master only: the SYNC_MASTER has no slave in sync (start the slave: tsmq broker -c examples/ha/slave.conf; ' +
    'a slave started first learns the master within 30 s, or set haMasterAddress in slave.conf; or use brokerRole=ASYNC_MASTER)',
  FLUSH_SLAVE_TIMEOUT: 'stored on the master; the slave did not confirm within slaveTimeout ms (slow or stalled slave)',
  FLUSH_DISK_TIMEOUT: 'stored; the disk did not confirm within syncFlushTimeout ms (SYNC_FLUSH)',
};

const producer = new Producer({ httpclient: {}, nameSrv, producerGroup: 'PID_HA_EXAMPLE', logger: quiet });
await producer.ready();
const byStatus = new Map();
for (let i = 0; i < count; i++) {
  let line;
  try {
    const r = await producer.send(new Message(topic, 'TagA', Buffer.from(`ha example #${i}`)));
    const where = `${r.messageQueue?.brokerName ?? '?'} queue ${r.messageQueue?.queueId ?? '?'} offset ${r.queueOffset}`;
    line = `#${i} ${r.sendStatus} (${where}, msgId ${r.msgId})${WHY[r.sendStatus] ? `: ${WHY[r.sendStatus]}` : ''}`;
    byStatus.set(r.sendStatus, (byStatus.get(r.sendStatus) ?? 0) + 1);
  } catch (err) {
    line = `#${i} FAILED: ${err.message}`;
    byStatus.set('FAILED', (byStatus.get('FAILED') ?? 0) + 1);
  }
  console.log(line);
}
const ok = byStatus.get('SEND_OK') ?? 0;
console.log(`produced ${ok} of ${count} with SEND_OK (${[...byStatus].map(([s, n]) => `${s} ${n}`).join(', ')})`);
await producer.close();
process.exit(ok === count ? 0 : 1);
