/**
 * `startBroker`: a nameserver, a broker and (optionally) the gRPC v2 front in the calling
 * process, on free ports, with a fresh temporary store unless told otherwise, so that an
 * application's tests can run real RocketMQ clients (ali-ons, Apache's Java client,
 * rocketmq-client-nodejs) against a real broker without a JVM. Same components as `tsmq start`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pino from 'pino';
import { BrokerController } from '../broker/broker-controller.js';
import { wrapPino, type Logger } from '../common/logging/logger.js';
import { socketAddressFromString } from '../common/message/msgid.js';
import { GrpcFront } from '../grpc/grpc-front.js';
import { NamesrvController } from '../namesrv/namesrv-controller.js';
import { DefaultMessageStore } from '../store/default-message-store.js';
import { MessageStore, type LogLevel } from './embedded-store.js';
import { MessageArrivals } from './message-arrivals.js';

export interface StartBrokerOptions {
  /**
   * Store root directory. Default: a new directory under the OS temp dir, deleted by `close()`
   * (unless `keepStore`). A given directory is never deleted.
   */
  storePathRootDir?: string;
  /** Keep the temporary store after close() (to inspect it); default false. */
  keepStore?: boolean;
  /**
   * Any broker.conf / store key with RocketMQ's names (`brokerName`, `flushDiskType`,
   * `autoCreateTopicEnable`, `mappedFileSizeCommitLog`, ...). The defaults below win over
   * nothing: a key given here replaces them. Defaults: `listenPort=0`, `haListenPort=0`,
   * `grpcListenPort=0` (free ports), `bindAddress=127.0.0.1` (the remoting and HA ports are
   * reachable from this host only, like `tsmq start`; `0.0.0.0` opens them),
   * `grpcListenHost=127.0.0.1`, `brokerIP1=127.0.0.1`.
   */
  brokerConfig?: Record<string, string | number | boolean>;
  /** Start the gRPC v2 front (RocketMQ 5 clients); default true. */
  grpc?: boolean;
  /** Start an in-process nameserver (127.0.0.1, free port); default true. false = register with `brokerConfig.namesrvAddr` (or nowhere). */
  namesrv?: boolean;
  /** Level of the broker's log lines (JSON on stderr); default 'warn'. */
  logLevel?: LogLevel;
}

export interface StartedBroker {
  /** Nameserver address for clients, `127.0.0.1:<port>`; null with `namesrv: false`. */
  namesrvAddr: string | null;
  /** Broker remoting address as registered (`brokerIP1:port`). */
  brokerAddr: string;
  /** gRPC v2 endpoint `127.0.0.1:<port>` for RocketMQ 5 clients; null with `grpc: false`. */
  grpcEndpoint: string | null;
  /** The broker's store (reads, puts, `consume()`); closed by `close()`, not by itself. */
  store: MessageStore;
  /** Store root directory in use. */
  storePathRootDir: string;
  /**
   * Stops gRPC, broker (flush, checkpoint) and nameserver, then deletes a temporary store.
   * Idempotent. Clients should be closed first, or they will log reconnect errors.
   */
  close(): Promise<void>;
}

function logger(level: LogLevel, component: string): Logger {
  return wrapPino(pino({ level, base: { component } }, pino.destination({ fd: 2, sync: false })));
}

/**
 * Starts nameserver + broker (+ gRPC) in this process. Resolves once every port listens and
 * the broker is registered with the nameserver.
 * @throws ConfigError for a bad config value; StoreLockedError when the store is open elsewhere;
 *   the listen error when a fixed port is taken. Whatever was started is stopped again.
 */
export async function startBroker(options: StartBrokerOptions = {}): Promise<StartedBroker> {
  const level = options.logLevel ?? 'warn';
  const tempStore = options.storePathRootDir === undefined;
  const storePathRootDir = options.storePathRootDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-broker-'));
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    stops.length = 0;
    if (tempStore && !options.keepStore) fs.rmSync(storePathRootDir, { recursive: true, force: true });
  };
  try {
    const cfg: Record<string, string> = {
      listenPort: '0',
      haListenPort: '0',
      bindAddress: '127.0.0.1',
      grpcListenPort: options.grpc === false ? '-1' : '0',
      grpcListenHost: '127.0.0.1',
      brokerIP1: '127.0.0.1',
      storePathRootDir,
    };
    for (const [k, v] of Object.entries(options.brokerConfig ?? {})) cfg[k] = String(v);
    if (options.grpc === false) cfg.grpcListenPort = '-1';
    let namesrvAddr: string | null = null;
    if (options.namesrv !== false) {
      const namesrv = new NamesrvController({ listenPort: 0, host: '127.0.0.1', logger: logger(level, 'namesrv') });
      await namesrv.start();
      stops.push(() => namesrv.shutdown());
      namesrvAddr = `127.0.0.1:${namesrv.port}`;
      cfg.namesrvAddr = namesrvAddr;
    } else {
      cfg.namesrvAddr ??= '';
    }
    const broker = await BrokerController.create({ brokerConfig: cfg, logger: logger(level, 'broker') });
    stops.push(() => broker.shutdown());
    await broker.start();
    let grpcEndpoint: string | null = null;
    const front = await GrpcFront.startBeside(broker, cfg, logger(level, 'grpc'));
    if (front) {
      stops.push(() => front.shutdown());
      grpcEndpoint = `127.0.0.1:${front.port}`;
    }
    const inner = broker.ctx.store;
    if (!(inner instanceof DefaultMessageStore)) throw new Error('startBroker: the broker did not open a DefaultMessageStore');
    const arrivals = new MessageArrivals();
    broker.addMessageArrivingListener((topic, queueId) => arrivals.notify(topic, queueId));
    stops.push(async () => arrivals.close());
    const store = new MessageStore({ inner, arrivals, close: null, storeHost: socketAddressFromString(broker.brokerAddr) });
    let closing: Promise<void> | null = null;
    return {
      namesrvAddr,
      brokerAddr: broker.brokerAddr,
      grpcEndpoint,
      store,
      storePathRootDir,
      close: () => (closing ??= stopAll()),
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
