/**
 * The `Settings` a server answers on the Telemetry stream (spec B2): the client's own settings
 * enriched with the server's values, as the Apache proxy does.
 *
 *   every client     backoff_policy {max_attempts, exponential_backoff{initial, max, multiplier}}
 *   PRODUCER         publishing {topics (echoed), max_body_size, validate_message_type: true};
 *                    max_attempts = grpcProducerMaxAttempts (the client keeps its own count anyway)
 *   PUSH_CONSUMER    subscription {group, subscriptions (echoed), fifo (group consumeMessageOrderly),
 *                    receive_batch_size, long_polling_timeout}; max_attempts = retryMaxTimes + 1
 *   SIMPLE_CONSUMER  subscription echoed (the client ignores the reply content)
 *
 * Workaround for rocketmq-client-nodejs 1.0.8: it reads only `initial.seconds` / `max.seconds`
 * of the exponential backoff but uses the computed delay as MILLISECONDS (ProcessQueue nack and
 * FIFO redelivery). For clients whose user agent language is NODE_JS the backoff durations are
 * therefore sent with the millisecond value in the `seconds` field, so the client waits the
 * configured time (1 s, 2 s, ... instead of 1 ms, 2 ms, ...). Other languages get real durations.
 */
import { msToDuration, type Duration, type RetryPolicy, type Settings } from './proto/v2-types.js';

export interface SettingsValues {
  maxBodySizeBytes: number;
  producerMaxAttempts: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  backoffMultiplier: number;
  receiveBatchSize: number;
  pushLongPollingTimeoutMs: number;
}

export interface GroupPolicy {
  fifo: boolean;
  maxDeliveryAttempts: number;
}

function backoffDuration(ms: number, nodeJsWorkaround: boolean): Duration {
  return nodeJsWorkaround ? { seconds: Math.round(ms), nanos: 0 } : msToDuration(ms);
}

export function backoffPolicy(v: SettingsValues, maxAttempts: number, language: string | undefined): RetryPolicy {
  const workaround = language === 'NODE_JS';
  return {
    max_attempts: maxAttempts,
    exponential_backoff: {
      initial: backoffDuration(v.backoffInitialMs, workaround),
      max: backoffDuration(v.backoffMaxMs, workaround),
      multiplier: v.backoffMultiplier,
    },
  };
}

/**
 * The consumer retry delay (ms) of a message delivered `reconsumeTimes` times before, by the
 * exponential backoff the settings reply gives consumers: min(max, initial × multiplier^n), n
 * capped at 32 (as Apache's ExponentialRetryPolicy.nextDelayDuration).
 */
export function retryBackoffMs(v: { grpcBackoffInitialMs: number; grpcBackoffMaxMs: number; grpcBackoffMultiplier: number }, reconsumeTimes: number): number {
  const n = Math.min(Math.max(0, reconsumeTimes), 32);
  return Math.min(v.grpcBackoffMaxMs, Math.round(v.grpcBackoffInitialMs * v.grpcBackoffMultiplier ** n));
}

/** Builds the reply to a client's settings. `group` is looked up only for consumers. */
export function settingsReply(client: Settings, v: SettingsValues, groupPolicy: (group: string) => GroupPolicy): Settings {
  const language = client.user_agent?.language;
  const base: Settings = {
    client_type: client.client_type,
    access_point: client.access_point ?? null,
    request_timeout: client.request_timeout ?? null,
    user_agent: client.user_agent ?? null,
  };
  if (client.publishing || client.client_type === 'PRODUCER') {
    return {
      ...base,
      backoff_policy: backoffPolicy(v, v.producerMaxAttempts, language),
      publishing: { topics: client.publishing?.topics ?? [], max_body_size: v.maxBodySizeBytes, validate_message_type: true },
    };
  }
  const sub = client.subscription ?? { subscriptions: [] };
  const group = sub.group?.name ?? '';
  const policy = groupPolicy(group);
  if (client.client_type === 'PUSH_CONSUMER') {
    return {
      ...base,
      backoff_policy: backoffPolicy(v, policy.maxDeliveryAttempts, language),
      subscription: {
        group: sub.group ?? null,
        subscriptions: sub.subscriptions ?? [],
        fifo: policy.fifo,
        receive_batch_size: v.receiveBatchSize,
        long_polling_timeout: msToDuration(v.pushLongPollingTimeoutMs),
      },
    };
  }
  return {
    ...base,
    backoff_policy: backoffPolicy(v, policy.maxDeliveryAttempts, language),
    subscription: {
      group: sub.group ?? null,
      subscriptions: sub.subscriptions ?? [],
      fifo: policy.fifo,
      ...(sub.long_polling_timeout ? { long_polling_timeout: sub.long_polling_timeout } : {}),
    },
  };
}
