/**
 * Configuration keys of the gRPC front (`apache.rocketmq.v2.MessagingService`), pop
 * consumption and transaction checking. Read from the same broker.conf `key=value` map as the
 * broker (unknown keys there are ignored by the other specs, and these are ignored by theirs).
 *
 * Names follow Apache RocketMQ where a proxy/broker key exists (`grpcServerPort` is accepted as an
 * alias of tsmq's `grpcListenPort`; `transactionTimeOut`, `transactionCheckMax`,
 * `transactionCheckInterval` are BrokerConfig names with Apache's defaults).
 */
import { resolveConfig, wholeNumberIn, type ConfigKey, type ConfigValue } from '../common/config/config-spec.js';

function key<T extends ConfigValue>(k: ConfigKey<T>): ConfigKey<ConfigValue> & { default: T } {
  return k as unknown as ConfigKey<ConfigValue> & { default: T };
}

const positive = (v: number): string | null => (Number.isInteger(v) && v > 0 ? null : 'must be an integer > 0');
const nonNegative = (v: number): string | null => (Number.isInteger(v) && v >= 0 ? null : 'must be an integer >= 0');
const port = wholeNumberIn(-1, 65535, 'a port in 0..65535, or -1 to switch the gRPC front off');

export const GRPC_CONFIG_SPEC = {
  grpcListenPort: key<number>({ name: 'grpcListenPort', type: 'number', default: 8081, aliases: ['grpcServerPort'], doc: 'gRPC v2 port (0 = any free port, -1 = gRPC front disabled)', validate: port }),
  grpcListenHost: key<string>({ name: 'grpcListenHost', type: 'string', default: '0.0.0.0', doc: 'address the gRPC server binds' }),
  grpcMaxBodySizeBytes: key<number>({ name: 'grpcMaxBodySizeBytes', type: 'number', default: 4 * 1024 * 1024, doc: 'publishing.max_body_size sent to producers (bytes)', validate: positive }),
  grpcDefaultInvisibleTimeMs: key<number>({ name: 'grpcDefaultInvisibleTimeMs', type: 'number', default: 60_000, aliases: ['defaultInvisibleTimeMills'], doc: 'invisible time of a receive without invisible_duration (push consumers; Apache proxy: 60 s)', validate: positive }),
  grpcMinInvisibleTimeMs: key<number>({ name: 'grpcMinInvisibleTimeMs', type: 'number', default: 0, aliases: ['minInvisibleTimeMillsForRecv'], doc: 'smallest invisible_duration a ReceiveMessage may ask for (ms); Apache proxy minInvisibleTimeMillsForRecv defaults to 10000, tsmq to 0 (shorter times for tests and quick retries)', validate: nonNegative }),
  grpcMaxInvisibleTimeMs: key<number>({ name: 'grpcMaxInvisibleTimeMs', type: 'number', default: 12 * 3_600_000, aliases: ['maxInvisibleTimeMills'], doc: 'largest invisible_duration accepted (ms, Apache: 12 h)', validate: positive }),
  grpcRenewIntervalMs: key<number>({ name: 'grpcRenewIntervalMs', type: 'number', default: 5000, aliases: ['renewSchedulePeriodMillis'], doc: 'period of the auto-renewal of push-consumer deliveries (ms; Apache proxy renewSchedulePeriodMillis, 5 s); a delivery is renewed when its invisible time ends within twice this (Apache renewAheadTimeMillis, 10 s)', validate: positive }),
  grpcMaxRenewMs: key<number>({ name: 'grpcMaxRenewMs', type: 'number', default: 3 * 3_600_000, aliases: ['renewMaxTimeMillis'], doc: 'longest a push-consumer delivery is kept invisible by auto-renewal (ms; Apache proxy renewMaxTimeMillis, 3 h); then it is nacked with the retry backoff of its attempt', validate: positive }),
  invisibleTimeMillisWhenClear: key<number>({ name: 'invisibleTimeMillisWhenClear', type: 'number', default: 1000, doc: 'push-consumer deliveries still held by a client that terminated or expired become visible again after this long (ms; Apache ProxyConfig, 1000)', validate: nonNegative }),
  grpcClientStreamLostExpireMs: key<number>({ name: 'grpcClientStreamLostExpireMs', type: 'number', default: 5000, doc: 'a client whose Telemetry streams all closed and that made no call since then for this long is gone (ms; its consumer registration ends, its held push deliveries are released)', validate: positive }),
  grpcMaxPollingTimeMs: key<number>({ name: 'grpcMaxPollingTimeMs', type: 'number', default: 20_000, aliases: ['grpcClientConsumerMaxLongPollingTimeoutMillis'], doc: 'longest long-polling hold of a ReceiveMessage / PullMessage (ms; Apache proxy grpcClientConsumerMaxLongPollingTimeoutMillis, 20 s)', validate: positive }),
  grpcPollingReserveMs: key<number>({ name: 'grpcPollingReserveMs', type: 'number', default: 500, doc: 'a long poll ends this long before the client deadline (ms)', validate: nonNegative }),
  grpcReceiveBatchSize: key<number>({ name: 'grpcReceiveBatchSize', type: 'number', default: 32, doc: 'subscription.receive_batch_size sent to push consumers', validate: positive }),
  grpcPushLongPollingTimeoutMs: key<number>({ name: 'grpcPushLongPollingTimeoutMs', type: 'number', default: 20_000, doc: 'subscription.long_polling_timeout sent to push consumers (ms; Apache sends its max long polling time, 20 s)', validate: positive }),
  grpcBackoffInitialMs: key<number>({ name: 'grpcBackoffInitialMs', type: 'number', default: 1000, doc: 'consumer retry backoff: first delay (ms)', validate: nonNegative }),
  grpcBackoffMaxMs: key<number>({ name: 'grpcBackoffMaxMs', type: 'number', default: 10_000, doc: 'consumer retry backoff: largest delay (ms)', validate: nonNegative }),
  grpcBackoffMultiplier: key<number>({ name: 'grpcBackoffMultiplier', type: 'number', default: 2, doc: 'consumer retry backoff multiplier', validate: (v: number) => (v >= 1 ? null : 'must be >= 1') }),
  grpcProducerMaxAttempts: key<number>({ name: 'grpcProducerMaxAttempts', type: 'number', default: 3, doc: 'backoff_policy.max_attempts sent to producers', validate: positive }),
} as const;

export type GrpcConfig = ReturnType<typeof resolveGrpcConfig>;

/** Typed gRPC/pop/transaction config from raw broker.conf keys. @throws ConfigError on a bad value. */
export function resolveGrpcConfig(raw: Record<string, string>) {
  return resolveConfig(GRPC_CONFIG_SPEC, raw);
}
