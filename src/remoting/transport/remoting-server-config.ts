/**
 * Limits of a remoting server (broker and nameserver), as config keys read from broker.conf /
 * namesrv.conf `key=value` text. They bound what one peer, or many, can make the server hold or
 * wait for; docs/limits.md explains each choice.
 *
 *   serverChannelMaxIdleTimeSeconds  120       Apache NettyServerConfig (same name, same default):
 *                                              close a connection with no traffic either way.
 *   serverMaxConnections             10000     tsmq (Apache has none; Netty accepts until the fd
 *                                              limit): refuse connections above this, 0 = no limit.
 *   serverFrameReadTimeoutMs         30000     tsmq: a frame must complete this long after its first
 *                                              byte. Apache's idle timer is reset by every byte, so a
 *                                              1 byte/s peer is never closed there; 30 s is 10x
 *                                              Apache's default client send timeout (3 s), far above
 *                                              a 16 MiB frame on any working link. 0 = off.
 *   serverPartialFrameBudgetBytes    256 MiB   tsmq: total bytes of unfinished frames over all
 *                                              connections (16 maximal 16 MiB frames in flight).
 *
 * The per-connection cap on an unfinished frame is the frame limit itself, Apache's
 * `com.rocketmq.remoting.frameMaxLength` (16 MiB, length field included, DEFAULT_MAX_FRAME_BYTES).
 */
import { resolveConfig, wholeNumberIn, type ConfigKey, type ConfigValue } from '../../common/config/config-spec.js';

export const DEFAULT_CHANNEL_MAX_IDLE_MS = 120_000;
export const DEFAULT_MAX_CONNECTIONS = 10_000;
export const DEFAULT_FRAME_READ_TIMEOUT_MS = 30_000;
export const DEFAULT_PARTIAL_FRAME_BUDGET_BYTES = 256 * 1024 * 1024;

function key<T extends ConfigValue>(k: ConfigKey<T>): ConfigKey<ConfigValue> & { default: T } {
  return k as unknown as ConfigKey<ConfigValue> & { default: T };
}

const nonNegative = wholeNumberIn(0, Number.MAX_SAFE_INTEGER, 'an integer >= 0');
const positive = wholeNumberIn(1, Number.MAX_SAFE_INTEGER, 'an integer > 0');

export const REMOTING_SERVER_CONFIG_SPEC = {
  serverChannelMaxIdleTimeSeconds: key<number>({ name: 'serverChannelMaxIdleTimeSeconds', type: 'number', default: DEFAULT_CHANNEL_MAX_IDLE_MS / 1000, doc: 'close a remoting connection without traffic for this long (s, Apache default 120; 0 = never)', validate: nonNegative }),
  serverMaxConnections: key<number>({ name: 'serverMaxConnections', type: 'number', default: DEFAULT_MAX_CONNECTIONS, doc: 'open remoting connections above which new ones are refused (0 = no limit)', validate: nonNegative }),
  serverFrameReadTimeoutMs: key<number>({ name: 'serverFrameReadTimeoutMs', type: 'number', default: DEFAULT_FRAME_READ_TIMEOUT_MS, doc: 'a remoting frame must be complete this long after its first byte (ms; 0 = no limit)', validate: nonNegative }),
  serverPartialFrameBudgetBytes: key<number>({ name: 'serverPartialFrameBudgetBytes', type: 'number', default: DEFAULT_PARTIAL_FRAME_BUDGET_BYTES, doc: 'bytes of unfinished remoting frames held over all connections; a connection exceeding it is closed', validate: positive }),
} as const;

/** The connection limits of a RemotingServer (part of its options; remoting-server.ts). */
export interface RemotingServerLimits {
  /**
   * Close connections idle (no bytes either way) this long; default 120000 like Apache's
   * serverChannelMaxIdleTimeSeconds; 0 disables. Clients reconnect on their next call.
   */
  channelMaxIdleMs?: number;
  /**
   * Open connections above which new ones are closed at once (one rate-limited warning);
   * default 10000 (`serverMaxConnections`, this file). 0 = no limit.
   */
  maxConnections?: number;
  /**
   * A frame must be complete this long after its first byte arrived, else the connection is
   * closed; later bytes do not extend it (a 1 byte/s trickle cannot keep a connection). Default
   * 30000 (`serverFrameReadTimeoutMs`); 0 disables.
   */
  frameReadTimeoutMs?: number;
  /** Server-wide budget for bytes of unfinished frames; default 256 MiB (`serverPartialFrameBudgetBytes`). */
  partialFrameBudgetBytes?: number;
}

/** RemotingServer options from raw `key=value` config. @throws ConfigError on a bad value. */
export function resolveRemotingServerLimits(raw: Record<string, string>): RemotingServerLimits {
  const c = resolveConfig(REMOTING_SERVER_CONFIG_SPEC, raw);
  return {
    channelMaxIdleMs: c.serverChannelMaxIdleTimeSeconds * 1000,
    maxConnections: c.serverMaxConnections,
    frameReadTimeoutMs: c.serverFrameReadTimeoutMs,
    partialFrameBudgetBytes: c.serverPartialFrameBudgetBytes,
  };
}
