/**
 * Fuzzes every request handler the broker registers (its header validation and body decoding),
 * in process over a real DefaultMessageStore: random request codes from the broker's table,
 * extFields built from the header field names RocketMQ uses with values of every wrong type, and
 * random or JSON-ish bodies.
 *
 * Asserts, per request: the handler answers (or declines, null) within 2 s, and when it throws the
 * error is one of tsmq's own (TsmqError and the codec errors: a clear remark for the SYSTEM_ERROR
 * reply), not a TypeError/RangeError. After the run: the broker still answers a valid send, and
 * nothing was created outside storePathRootDir (a name with `/`, `..` or NUL never reached the file
 * system). Fewer cases than the pure decoders (each request may touch the store): FUZZ_RUNS / 10.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { FUZZ_RUNS, FUZZ_SEED, fuzzParams, nastyStringArb } from './fuzz-config.js';
import { BrokerHarness } from '../unit/broker/support/broker-harness.js';
import { DefaultMessageStore } from '../../src/store/default-message-store.js';
import { ManualClock } from '../../src/common/time/clock.js';
import { silentLogger } from '../../src/common/logging/logger.js';
import { RequestCode } from '../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../src/remoting/codes/response-code.js';
import { TsmqError } from '../../src/common/errors.js';
import { FrameError } from '../../src/remoting/protocol/frame-codec.js';
import { Sql92SyntaxError, Sql92EvalError } from '../../src/broker/filter/sql92/index.js';
import { ExtraInfoError } from '../../src/broker/pop/extra-info.js';
import type { ExtFieldValue } from '../../src/remoting/protocol/remoting-command.js';
import type { RequestHandler } from '../../src/remoting/processor/request-processor.js';
import { createRequestCommand } from '../../src/remoting/protocol/commands.js';
import { FakeChannel } from '../unit/broker/support/broker-harness.js';
import { KvConfigManager } from '../../src/namesrv/kv/kv-config-manager.js';
import { RouteInfoManager } from '../../src/namesrv/route/route-info-manager.js';
import type { NamesrvContext } from '../../src/namesrv/namesrv-context.js';
import { registerBrokerProcessor } from '../../src/namesrv/processors/register-broker.js';
import { unregisterBrokerProcessor } from '../../src/namesrv/processors/unregister-broker.js';
import { getRouteInfoByTopicProcessor } from '../../src/namesrv/processors/get-route-info-by-topic.js';
import { getBrokerClusterInfoProcessor } from '../../src/namesrv/processors/get-broker-cluster-info.js';
import { getAllTopicListProcessor } from '../../src/namesrv/processors/get-all-topic-list.js';
import { deleteTopicInNamesrvProcessor } from '../../src/namesrv/processors/delete-topic-in-namesrv.js';
import { putKvConfigProcessor } from '../../src/namesrv/processors/put-kv-config.js';
import { getKvConfigProcessor } from '../../src/namesrv/processors/get-kv-config.js';
import { deleteKvConfigProcessor } from '../../src/namesrv/processors/delete-kv-config.js';
import { getKvListByNamespaceProcessor } from '../../src/namesrv/processors/get-kvlist-by-namespace.js';
import { queryDataVersionProcessor } from '../../src/namesrv/processors/query-data-version.js';
import { brokerHeartbeatProcessor } from '../../src/namesrv/processors/broker-heartbeat.js';
import { writePermOfBrokerProcessor } from '../../src/namesrv/processors/write-perm-of-broker.js';
import { getTopicsByClusterProcessor } from '../../src/namesrv/processors/get-topics-by-cluster.js';
import { getSystemTopicListProcessor } from '../../src/namesrv/processors/get-system-topic-list.js';
import { getNamesrvConfigProcessor, updateNamesrvConfigProcessor } from '../../src/namesrv/processors/namesrv-config.js';
import { NamesrvConfigTable } from '../../src/namesrv/config/namesrv-config-table.js';

const FIELD_NAMES = [
  'topic', 'consumerGroup', 'group', 'producerGroup', 'queueId', 'queueOffset', 'offset', 'commitOffset', 'maxMsgNums', 'sysFlag',
  'suspendTimeoutMillis', 'subscription', 'subVersion', 'expressionType', 'invisibleTime', 'pollTime', 'bornTime', 'initMode', 'expType',
  'exp', 'order', 'extraInfo', 'timestamp', 'isForce', 'key', 'maxNum', 'beginTimestamp', 'endTimestamp', 'msgId', 'originMsgId',
  'originTopic', 'delayLevel', 'maxReconsumeTimes', 'clientId', 'tranStateTableOffset', 'commitLogOffset', 'fromTransactionCheck',
  'transactionId', 'commitOrRollback', 'defaultTopic', 'defaultTopicQueueNums', 'readQueueNums', 'writeQueueNums', 'perm',
  'topicFilterType', 'topicSysFlag', 'clusterName', 'brokerName', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n',
  'username', 'subject', 'resources', 'AccessKey', 'Signature', 'timeoutMillis', 'lockTimeMillis', 'unlock', 'mode', 'popShareQueueNum',
];

/** A header every field of which has a sensible value (send V2 letters included). */
const PLAUSIBLE: Record<string, ExtFieldValue> = {
  topic: 'FuzzTopic', consumerGroup: 'FuzzGroup', group: 'FuzzGroup', producerGroup: 'FuzzProducer', queueId: '0', queueOffset: '0',
  offset: '0', commitOffset: '0', maxMsgNums: '4', sysFlag: '0', suspendTimeoutMillis: '0', subscription: '*', subVersion: '0',
  expressionType: 'TAG', invisibleTime: '60000', pollTime: '0', bornTime: '1700000000000', initMode: '0', expType: 'TAG', exp: '*',
  order: 'false', extraInfo: '0 1700000000000 60000 0 0 broker-a 0 0', timestamp: '1700000000000', isForce: 'false', key: 'k',
  maxNum: '4', beginTimestamp: '0', endTimestamp: '1800000000000', msgId: '7F00000100002A9F0000000000000000', delayLevel: '1',
  maxReconsumeTimes: '16', clientId: 'c1', commitLogOffset: '0', tranStateTableOffset: '0', commitOrRollback: '8',
  fromTransactionCheck: 'false', defaultTopic: 'TBW102', defaultTopicQueueNums: '4', readQueueNums: '4', writeQueueNums: '4',
  perm: '6', topicFilterType: 'SINGLE_TAG', topicSysFlag: '0', clusterName: 'DefaultCluster', brokerName: 'broker-a',
  a: 'FuzzProducer', b: 'FuzzTopic', c: 'TBW102', d: '4', e: '0', f: '0', g: '1700000000000', h: '0', i: 'TAGS\u0001x\u0002', j: '0', k: 'false',
  username: 'fuzzer', timeoutMillis: '3000',
};

const valueArb: fc.Arbitrary<ExtFieldValue> = fc.oneof(
  nastyStringArb, fc.integer(), fc.double(), fc.boolean(),
  fc.constantFrom('0', '1', '-1', '2147483648', '9223372036854775807', 'TopicA', 'GroupA', '*', 'TagA || TagB', 'a > 1', '%RETRY%GroupA', '0 1 2 0 0 brokerA 0 0', 'DefaultCluster'),
);

const bodyArb: fc.Arbitrary<Buffer | null> = fc.oneof(
  fc.constant(null),
  fc.uint8Array({ maxLength: 128 }).map((u) => Buffer.from(u)),
  fc.json({ maxDepth: 3 }).map((s) => Buffer.from(s)),
  fc.dictionary(fc.constantFrom('clientID', 'consumerDataSet', 'producerDataSet', 'topic', 'consumerGroup', 'mqSet', 'offsetTable', 'topicConfigTable', 'groupName', 'subscriptionDataSet', 'username', 'password'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
    .map((o) => Buffer.from(JSON.stringify(o))),
);

/** Errors a handler may throw: tsmq's own, with a message made for the SYSTEM_ERROR remark. */
function isOwnError(e: unknown): boolean {
  return e instanceof TsmqError || e instanceof FrameError || e instanceof Sql92SyntaxError || e instanceof Sql92EvalError || e instanceof ExtraInfoError;
}

test(`every broker request handler: random headers and bodies give a reply or a clear error (${FUZZ_RUNS / 10} cases)`, async () => {
  const outer = mkdtempSync(join(tmpdir(), 'tsmq-fuzz-'));
  const dir = join(outer, 'a', 'b', 'store');
  mkdirSync(dir, { recursive: true });
  const clock = new ManualClock(1_700_000_000_000);
  const store = await DefaultMessageStore.open({ storePathRootDir: dir, mappedFileSizeCommitLog: 4 * 1024 * 1024, mappedFileSizeConsumeQueue: 600 }, { clock, logger: silentLogger });
  const h = await BrokerHarness.create({ store, clock, dir });
  try {
    const codes = Object.values(RequestCode).filter((c) => h.broker.handlerFor(c) !== undefined);
    assert.ok(codes.length > 40, `only ${codes.length} handlers found`);
    const crashes = new Map<string, string>();
    const outcomes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...codes),
        fc.boolean(),
        fc.array(fc.tuple(fc.constantFrom(...FIELD_NAMES), valueArb), { maxLength: 6 }),
        fc.array(fc.constantFrom(...FIELD_NAMES), { maxLength: 3 }),
        bodyArb,
        async (code, fromPlausible, overrides, removed, body) => {
          // mostly a plausible header with a few fields wrong or missing, so handlers get past the first check
          const ext: Record<string, ExtFieldValue> = fromPlausible ? { ...PLAUSIBLE } : {};
          for (const [k, v] of overrides) ext[k] = v;
          for (const k of removed) delete ext[k];
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), 2000)));
          try {
            const r = await Promise.race([h.invoke(code, ext, body), timeout]);
            assert.notEqual(r, 'timeout', `request ${code} got no answer in 2 s`);
            if (process.env.FUZZ_DEBUG && r && r !== 'timeout') outcomes.set(`${code}->${r.code}`, (outcomes.get(`${code}->${r.code}`) ?? 0) + 1);
          } catch (e) {
            if (!isOwnError(e)) {
              const err = e as Error;
              crashes.set(`${code}:${err.name}:${err.message}`, `${JSON.stringify(ext)} body=${body?.toString('hex').slice(0, 200)}\n${err.stack}`);
            }
          } finally {
            clearTimeout(timer);
          }
        },
      ),
      fuzzParams(FUZZ_RUNS / 10),
    );
    if (process.env.FUZZ_DEBUG) console.log([...outcomes.entries()].sort().join(" "));
    assert.deepEqual([...crashes.entries()].slice(0, 5), [], `handlers crashed on ${crashes.size} kinds of input`);
    // still serving
    const sent = await h.send('FuzzAfter', 'still here');
    assert.equal(sent.code, ResponseCode.SUCCESS, sent.remark ?? '');
    // nothing escaped storePathRootDir
    assert.deepEqual(readdirSync(join(outer, 'a', 'b')), ['store']);
    assert.deepEqual(readdirSync(join(outer, 'a')), ['b']);
    assert.deepEqual(readdirSync(outer), ['a']);
  } finally {
    await h.close();
    rmSync(outer, { recursive: true, force: true });
  }
});

const NAMESRV_FIELDS = ['topic', 'brokerName', 'brokerAddr', 'clusterName', 'haServerAddr', 'brokerId', 'compressed', 'bodyCrc32', 'namespace', 'key', 'value', 'heartbeatTimeoutMillis', 'enableActingMaster', 'electionPriority', 'sysFlag', 'acceptStandardJsonOnly'];
const NAMESRV_PLAUSIBLE: Record<string, ExtFieldValue> = {
  topic: 'FuzzTopic', brokerName: 'broker-a', brokerAddr: '127.0.0.1:10911', clusterName: 'DefaultCluster', haServerAddr: '127.0.0.1:10912',
  brokerId: '0', compressed: 'false', bodyCrc32: '0', namespace: 'ns', key: 'k', value: 'v', heartbeatTimeoutMillis: '120000',
};
const registerBody = fc.record({
  topicConfigSerializeWrapper: fc.record({
    topicConfigTable: fc.dictionary(fc.oneof(nastyStringArb, fc.constant('FuzzTopic')), fc.oneof(fc.jsonValue({ maxDepth: 1 }), fc.record({ topicName: nastyStringArb, readQueueNums: fc.integer(), writeQueueNums: fc.integer(), perm: fc.integer() })), { maxKeys: 3 }),
    dataVersion: fc.oneof(fc.jsonValue({ maxDepth: 1 }), fc.record({ timestamp: fc.integer(), counter: fc.integer() })),
  }, { requiredKeys: [] }),
  filterServerList: fc.jsonValue({ maxDepth: 1 }),
}, { requiredKeys: [] }).map((o) => Buffer.from(JSON.stringify(o)));

test(`every nameserver request handler: random headers and bodies give a reply or a clear error (${FUZZ_RUNS / 10} cases)`, async () => {
  const config = new NamesrvConfigTable({ listenPort: '9876', bindAddress: '127.0.0.1', scanNotActiveBrokerInterval: '5000', defaultTopicQueueNums: '4', deleteTopicWithBrokerRegistration: 'false', orderMessageEnable: 'false', clusterTest: 'false', productEnvName: 'center', serverChannelMaxIdleTimeSeconds: '120' });
  const ctx: NamesrvContext = { routes: new RouteInfoManager({ logger: silentLogger }), kv: new KvConfigManager(), logger: silentLogger, config };
  const handlers = new Map<number, RequestHandler>([
    [RequestCode.PUT_KV_CONFIG, putKvConfigProcessor(ctx)],
    [RequestCode.GET_KV_CONFIG, getKvConfigProcessor(ctx)],
    [RequestCode.DELETE_KV_CONFIG, deleteKvConfigProcessor(ctx)],
    [RequestCode.GET_KVLIST_BY_NAMESPACE, getKvListByNamespaceProcessor(ctx)],
    [RequestCode.REGISTER_BROKER, registerBrokerProcessor(ctx)],
    [RequestCode.UNREGISTER_BROKER, unregisterBrokerProcessor(ctx)],
    [RequestCode.GET_ROUTEINFO_BY_TOPIC, getRouteInfoByTopicProcessor(ctx)],
    [RequestCode.GET_BROKER_CLUSTER_INFO, getBrokerClusterInfoProcessor(ctx)],
    [RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, getAllTopicListProcessor(ctx)],
    [RequestCode.DELETE_TOPIC_IN_NAMESRV, deleteTopicInNamesrvProcessor(ctx)],
    [RequestCode.QUERY_DATA_VERSION, queryDataVersionProcessor(ctx)],
    [RequestCode.BROKER_HEARTBEAT, brokerHeartbeatProcessor(ctx)],
    [RequestCode.WIPE_WRITE_PERM_OF_BROKER, writePermOfBrokerProcessor(ctx, 'wipe')],
    [RequestCode.ADD_WRITE_PERM_OF_BROKER, writePermOfBrokerProcessor(ctx, 'add')],
    [RequestCode.GET_TOPICS_BY_CLUSTER, getTopicsByClusterProcessor(ctx)],
    [RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS, getSystemTopicListProcessor(ctx)],
    [RequestCode.GET_NAMESRV_CONFIG, getNamesrvConfigProcessor(ctx)],
    [RequestCode.UPDATE_NAMESRV_CONFIG, updateNamesrvConfigProcessor(ctx)],
  ]);
  const channel = new FakeChannel('127.0.0.1:40001');
  const crashes = new Map<string, string>();
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...handlers.keys()),
      fc.boolean(),
      fc.array(fc.tuple(fc.constantFrom(...NAMESRV_FIELDS), valueArb), { maxLength: 5 }),
      fc.array(fc.constantFrom(...NAMESRV_FIELDS), { maxLength: 3 }),
      fc.oneof(bodyArb, registerBody),
      async (code, fromPlausible, overrides, removed, body) => {
        const ext: Record<string, ExtFieldValue> = fromPlausible ? { ...NAMESRV_PLAUSIBLE } : {};
        for (const [k, v] of overrides) ext[k] = v;
        for (const k of removed) delete ext[k];
        try {
          await handlers.get(code)!({ channel, request: createRequestCommand(code, ext, body) });
        } catch (e) {
          if (!isOwnError(e)) {
            const err = e as Error;
            crashes.set(`${code}:${err.name}:${err.message}`, `${JSON.stringify(ext)} body=${body?.toString().slice(0, 300)}\n${err.stack}`);
          }
        }
      },
    ),
    fuzzParams(FUZZ_RUNS / 10),
  );
  assert.deepEqual([...crashes.entries()].slice(0, 5), [], `handlers crashed on ${crashes.size} kinds of input`);
});

console.log(`processor fuzz: seed=${FUZZ_SEED} runs=${FUZZ_RUNS / 10}`);
