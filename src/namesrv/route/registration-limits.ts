/**
 * Bounds on one REGISTER_BROKER (103) request at the nameserver, as namesrv.conf keys:
 *
 *   registerBrokerMaxBodyBytes  16 MiB   checked before the body is parsed. Apache has no own cap;
 *                                        its frame limit (frameMaxLength, 16 MiB) bounds the body,
 *                                        so the default is that and only lowering it changes
 *                                        anything. A 16 MiB body costs ~0.4 s of parsing here.
 *   registerBrokerMaxTopicNums  100000   topics in one registration. Apache has none; a real
 *                                        topic config is ~200 bytes of JSON, so a 16 MiB body holds
 *                                        ~80,000 of them and this cap lets every such broker
 *                                        register while refusing synthetic lists of tiny entries.
 *
 * A refused registration gets SYSTEM_ERROR with the reason as remark (the broker logs it) and
 * leaves the routes as they were.
 */
import { resolveConfig, wholeNumberIn, type ConfigKey, type ConfigValue } from '../../common/config/config-spec.js';

export interface RegistrationLimits {
  maxBodyBytes: number;
  maxTopicNums: number;
}

export const DEFAULT_REGISTRATION_LIMITS: RegistrationLimits = { maxBodyBytes: 16 * 1024 * 1024, maxTopicNums: 100_000 };

function key<T extends ConfigValue>(k: ConfigKey<T>): ConfigKey<ConfigValue> & { default: T } {
  return k as unknown as ConfigKey<ConfigValue> & { default: T };
}
const positive = wholeNumberIn(1, Number.MAX_SAFE_INTEGER, 'an integer > 0');

export const REGISTRATION_LIMITS_SPEC = {
  registerBrokerMaxBodyBytes: key<number>({ name: 'registerBrokerMaxBodyBytes', type: 'number', default: DEFAULT_REGISTRATION_LIMITS.maxBodyBytes, doc: 'largest REGISTER_BROKER body the nameserver parses (bytes)', validate: positive }),
  registerBrokerMaxTopicNums: key<number>({ name: 'registerBrokerMaxTopicNums', type: 'number', default: DEFAULT_REGISTRATION_LIMITS.maxTopicNums, doc: 'most topics one REGISTER_BROKER may carry', validate: positive }),
} as const;

/** @throws ConfigError on a bad value. */
export function resolveRegistrationLimits(raw: Record<string, string>): RegistrationLimits {
  const c = resolveConfig(REGISTRATION_LIMITS_SPEC, raw);
  return { maxBodyBytes: c.registerBrokerMaxBodyBytes, maxTopicNums: c.registerBrokerMaxTopicNums };
}

/** Remark refusing a body of `bodyBytes`, or null. */
export function checkRegistrationBody(bodyBytes: number, limits: RegistrationLimits): string | null {
  return bodyBytes > limits.maxBodyBytes
    ? `register broker body of ${bodyBytes} bytes exceeds registerBrokerMaxBodyBytes=${limits.maxBodyBytes}`
    : null;
}

/** Remark refusing a registration of `topicNums` topics, or null. */
export function checkRegistrationTopics(topicNums: number, limits: RegistrationLimits): string | null {
  return topicNums > limits.maxTopicNums
    ? `register broker body carries ${topicNums} topics, more than registerBrokerMaxTopicNums=${limits.maxTopicNums}`
    : null;
}
