import { test } from 'node:test';
import assert from 'node:assert/strict';
import { settingsReply, type SettingsValues } from '../../../src/grpc/settings-reply.js';
import { fromProtoMessage, isInboundError, md5Hex, toProtoMessage } from '../../../src/grpc/message-converter.js';
import { messagingServiceDefinition } from '../../../src/grpc/proto/messaging-service.js';
import { socketAddressOf } from '../../../src/common/message/msgid.js';
import { deflateSync } from 'node:zlib';
import type { Message } from '../../../src/grpc/proto/v2-types.js';
import type { MessageExt } from '../../../src/common/message/message.js';

const values: SettingsValues = {
  maxBodySizeBytes: 4194304,
  producerMaxAttempts: 3,
  backoffInitialMs: 1000,
  backoffMaxMs: 10_000,
  backoffMultiplier: 2,
  receiveBatchSize: 32,
  pushLongPollingTimeoutMs: 30_000,
};

test('the service definition loads from the client package protos', () => {
  const def = messagingServiceDefinition();
  for (const rpc of ['QueryRoute', 'Heartbeat', 'SendMessage', 'QueryAssignment', 'ReceiveMessage', 'AckMessage', 'ChangeInvisibleDuration', 'ForwardMessageToDeadLetterQueue', 'EndTransaction', 'Telemetry', 'NotifyClientTermination', 'PullMessage', 'QueryOffset', 'GetOffset', 'UpdateOffset']) {
    assert.ok(def[rpc], rpc);
  }
  assert.equal(def.Telemetry!.requestStream, true);
  assert.equal(def.ReceiveMessage!.responseStream, true);
});

test('producer settings: publishing with max_body_size and an exponential backoff', () => {
  const r = settingsReply({ client_type: 'PRODUCER', publishing: { topics: [{ name: 'T' }], max_body_size: 0, validate_message_type: true }, user_agent: { language: 'JAVA', version: '5', platform: '', hostname: '' } }, values, () => ({ fifo: false, maxDeliveryAttempts: 17 }));
  assert.equal(r.publishing!.max_body_size, 4194304);
  assert.equal(r.publishing!.validate_message_type, true);
  assert.deepEqual(r.publishing!.topics, [{ name: 'T' }]);
  assert.deepEqual(r.backoff_policy, { max_attempts: 3, exponential_backoff: { initial: { seconds: 1, nanos: 0 }, max: { seconds: 10, nanos: 0 }, multiplier: 2 } });
});

test('push consumer settings: fifo, batch, long polling, max attempts = retryMaxTimes + 1; NODE_JS backoff in the seconds field as ms', () => {
  const r = settingsReply(
    { client_type: 'PUSH_CONSUMER', subscription: { group: { name: 'G' }, subscriptions: [] }, user_agent: { language: 'NODE_JS', version: '1.0.8', platform: '', hostname: '' } },
    values,
    (g) => ({ fifo: g === 'G', maxDeliveryAttempts: 17 }),
  );
  assert.equal(r.subscription!.fifo, true);
  assert.equal(r.subscription!.receive_batch_size, 32);
  assert.deepEqual(r.subscription!.long_polling_timeout, { seconds: 30, nanos: 0 });
  assert.equal(r.backoff_policy!.max_attempts, 17);
  assert.deepEqual(r.backoff_policy!.exponential_backoff!.initial, { seconds: 1000, nanos: 0 }, 'client 1.0.8 reads seconds and uses them as ms');
});

const sent = (over: Partial<Message['system_properties']> = {}, body = Buffer.from('hi')): Message => ({
  topic: { name: 'T' },
  user_properties: { color: 'red' },
  body,
  system_properties: { keys: ['k1', 'k2'], tag: 'TagA', message_id: '01ABC', body_digest: null, body_encoding: 'IDENTITY', message_type: 'NORMAL', born_timestamp: { seconds: 1700000000, nanos: 5e6 }, born_host: 'host-1', queue_id: 0, ...over },
});
const opts = { bornHost: socketAddressOf('10.0.0.1', 1234), storeHost: socketAddressOf('127.0.0.1', 10911), nowMs: 1_700_000_000_000, maxBodySizeBytes: 100 };

test('sent messages become RocketMQ properties; bad input gets the v2 code', () => {
  const r = fromProtoMessage(sent(), opts);
  assert.ok(!isInboundError(r));
  assert.deepEqual(Object.fromEntries(r.msg.properties), { color: 'red', TAGS: 'TagA', KEYS: 'k1 k2', UNIQ_KEY: '01ABC', __BORNHOST: 'host-1', RECONSUME_TIME: '0', PGROUP: 'T', BORN_TIMESTAMP: '1700000000005' });
  assert.equal(r.msg.bornTimestamp, 1_700_000_000_005);
  const fifo = fromProtoMessage(sent({ message_type: 'FIFO', message_group: 'g1' }), opts);
  assert.ok(!isInboundError(fifo) && fifo.msg.properties.get('__SHARDINGKEY') === 'g1');
  const delay = fromProtoMessage(sent({ message_type: 'DELAY', delivery_timestamp: { seconds: 1_700_000_005, nanos: 0 } }), opts);
  assert.ok(!isInboundError(delay) && delay.deliverMs === 1_700_000_005_000);
  const fifo63 = fromProtoMessage(sent({ message_type: 'FIFO', message_group: 'g'.repeat(63) }), opts);
  assert.ok(!isInboundError(fifo63), 'a 63-byte message group is taken (Apache refuses >= maxMessageGroupSize 64)');
  const tx = fromProtoMessage(sent({ message_type: 'TRANSACTION', delivery_attempt: 3, orphaned_transaction_recovery_duration: { seconds: 3600, nanos: 900e6 } }), opts);
  assert.ok(!isInboundError(tx));
  assert.equal(tx.msg.properties.get('TRAN_MSG'), 'true');
  assert.equal(tx.msg.properties.get('CHECK_IMMUNITY_TIME_IN_SECONDS'), '3600', 'whole seconds, as Durations.toSeconds');
  assert.equal(tx.msg.properties.get('RECONSUME_TIME'), '3');
  assert.equal(tx.msg.properties.get('PGROUP'), 'T', "Apache's proxy: the topic is the producer group");
  const delivered = toProtoMessage({ ...r.msg, storeSize: 0, magicCode: 0, bodyCrc: 0, queueOffset: 0, commitLogOffset: 0, storeTimestamp: 0, msgId: 'X', sysFlag: 0 } as unknown as MessageExt);
  assert.deepEqual(delivered.user_properties, { color: 'red' }, 'PGROUP/RECONSUME_TIME/BORN_TIMESTAMP are system properties, never user properties');
  const cases: Array<[Message, string]> = [
    [sent({}, Buffer.alloc(101)), 'MESSAGE_BODY_TOO_LARGE'],
    [sent({}, Buffer.alloc(0)), 'MESSAGE_BODY_EMPTY'],
    [sent({ message_type: 'FIFO' }), 'MESSAGE_PROPERTY_CONFLICT_WITH_TYPE'],
    [sent({ tag: 'a|b' }), 'ILLEGAL_MESSAGE_TAG'],
    [sent({ message_type: 'DELAY', delivery_timestamp: { seconds: 1_800_000_000, nanos: 0 } }), 'ILLEGAL_DELIVERY_TIME'],
    // Apache's proxy maxDelayTimeMills (1 day), not the broker's timerMaxDelaySec (3 days).
    [sent({ message_type: 'DELAY', delivery_timestamp: { seconds: opts.nowMs / 1000 + 24 * 3600 + 1, nanos: 0 } }), 'ILLEGAL_DELIVERY_TIME'],
    [{ ...sent(), topic: { name: 'bad topic' } }, 'ILLEGAL_TOPIC'],
    [{ ...sent(), user_properties: { KEYS: 'x' } }, 'ILLEGAL_MESSAGE_PROPERTY_KEY'],
    [sent({ message_type: 'FIFO', message_group: 'g'.repeat(64) }), 'ILLEGAL_MESSAGE_GROUP'],
    [sent({ message_type: 'FIFO', message_group: '   ' }), 'ILLEGAL_MESSAGE_GROUP'],
    [sent({ message_type: 'FIFO', message_group: 'g\u0085' }), 'ILLEGAL_MESSAGE_GROUP'],
    [sent({ message_type: 'TRANSACTION', orphaned_transaction_recovery_duration: { seconds: 3601, nanos: 0 } }), 'BAD_REQUEST'],
  ];
  for (const [m, code] of cases) {
    const e = fromProtoMessage(m, opts);
    assert.ok(isInboundError(e), code);
    assert.equal(e.code, code);
  }
  const dayAhead = (extraMs: number) => sent({ message_type: 'DELAY', delivery_timestamp: { seconds: Math.floor((opts.nowMs + 86_400_000 + extraMs) / 1000), nanos: ((opts.nowMs + 86_400_000 + extraMs) % 1000) * 1e6 } });
  const atLimit = fromProtoMessage(dayAhead(0), opts);
  assert.ok(!isInboundError(atLimit), 'exactly maxDelayTimeMills ahead is accepted (Apache refuses only beyond it)');
  assert.equal(atLimit.msg.properties.get('TIMER_DELIVER_MS'), String(opts.nowMs + 86_400_000));
  const beyond = fromProtoMessage(dayAhead(1), opts);
  assert.ok(isInboundError(beyond));
  assert.equal(beyond.message, 'the max delay time of message is too large, max is 86400000');
});

test('delivered messages carry an uppercase MD5 digest of the (inflated) body and the system properties', () => {
  const body = Buffer.from('x'.repeat(5000));
  const ext: MessageExt = {
    topic: 'T',
    queueId: 2,
    flag: 0,
    body: deflateSync(body),
    properties: new Map([['TAGS', 'TagA'], ['KEYS', 'a b'], ['UNIQ_KEY', 'U1'], ['color', 'red'], ['__SHARDINGKEY', 'g']]),
    sysFlag: 0x1,
    bornTimestamp: 1000,
    bornHost: socketAddressOf('10.0.0.1', 1),
    storeHost: socketAddressOf('127.0.0.1', 10911),
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    storeSize: 0,
    magicCode: 0,
    bodyCrc: 0,
    queueOffset: 7,
    commitLogOffset: 99,
    storeTimestamp: 2000,
    msgId: 'X',
  };
  const m = toProtoMessage(ext, { receiptHandle: 'h', attempt: 2, invisibleMs: 1500 });
  assert.ok(m.body.equals(body));
  assert.deepEqual(m.system_properties.body_digest, { type: 'MD5', checksum: md5Hex(body) });
  assert.match(m.system_properties.body_digest!.checksum, /^[0-9A-F]{32}$/);
  assert.deepEqual(m.user_properties, { color: 'red' });
  assert.equal(m.system_properties.message_id, 'U1');
  assert.deepEqual(m.system_properties.keys, ['a', 'b']);
  assert.equal(m.system_properties.message_type, 'FIFO');
  assert.equal(m.system_properties.message_group, 'g');
  assert.equal(m.system_properties.delivery_attempt, 2);
  assert.equal(m.system_properties.queue_offset, 7);
  assert.equal(m.system_properties.receipt_handle, 'h');
  assert.equal(m.system_properties.born_host, '10.0.0.1');
  assert.equal(m.system_properties.store_host, '127.0.0.1:10911');
  // TRAN_MSG is read as Java Boolean.parseBoolean (Apache): any case of "true", nothing else
  const typeWith = (tran: string): string => toProtoMessage({ ...ext, properties: new Map([['TRAN_MSG', tran]]) }, { receiptHandle: 'h', attempt: 1, invisibleMs: 1 }).system_properties.message_type;
  assert.deepEqual(['true', 'TRUE', 'True', 'yes', '1', 'false', 'truex'].map(typeWith), ['TRANSACTION', 'TRANSACTION', 'TRANSACTION', 'NORMAL', 'NORMAL', 'NORMAL', 'NORMAL']);
});
