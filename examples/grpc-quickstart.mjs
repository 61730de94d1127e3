// Produce and consume through a running tsmq (`npm start`, gRPC front on 127.0.0.1:8081) with the
// unmodified RocketMQ 5 Node.js client `rocketmq-client-nodejs`.
// Usage: node examples/grpc-quickstart.mjs [endpoints] [message count]
import { Producer, SimpleConsumer } from 'rocketmq-client-nodejs';

const endpoints = process.argv[2] ?? '127.0.0.1:8081';
const count = Number(process.argv[3] ?? 10);
const topic = 'GrpcQuickStartTopic';
const quiet = { info() {}, debug() {}, warn() {}, error: console.error };

const producer = new Producer({ endpoints, topics: [topic], logger: quiet });
await producer.startup();
const runId = Date.now().toString(36);
for (let i = 0; i < count; i++) {
  await producer.send({ topic, tag: 'TagA', keys: [`${runId}-${i}`], body: Buffer.from(`hello tsmq over gRPC #${i}`) });
}
console.log(`produced ${count} messages to ${topic}`);

const consumer = new SimpleConsumer({
  endpoints,
  consumerGroup: 'GID_GRPC_QUICKSTART',
  subscriptions: new Map([[topic, '*']]),
  awaitDuration: 2000,
  logger: quiet,
});
await consumer.startup();
const seen = new Set();
const deadline = Date.now() + 30_000;
while (seen.size < count && Date.now() < deadline) {
  for (const m of await consumer.receive(16, 15_000)) {
    if (m.keys.some((k) => k.startsWith(runId))) seen.add(m.keys[0]);
    await consumer.ack(m);
  }
}
console.log(`consumed and acked ${seen.size} of them`);
await consumer.shutdown();
await producer.shutdown();
process.exit(seen.size === count ? 0 : 1);
