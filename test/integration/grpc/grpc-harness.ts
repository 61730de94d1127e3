/**
 * In-process broker + gRPC front for the gRPC integration tests: BrokerController (remoting on a
 * free port, no nameserver) and GrpcFront on a free port, over one temp store directory.
 * The store's arrival listener is fanned out to both the broker and the front (the wiring the
 * lead adds in `tsmq start`). `restart()` shuts both down cleanly and opens them again on the
 * same directory (same gRPC port, so clients reconnect).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import { resolveStoreConfig } from '../../../src/store/store-config.js';
import type { MessageArrivingListener, MessageStore } from '../../../src/store/message-store.js';
import { silentLogger, type Logger } from '../../../src/common/logging/logger.js';
import { GrpcFront } from '../../../src/grpc/grpc-front.js';
import { NamesrvController } from '../../../src/namesrv/namesrv-controller.js';

export interface Harness {
  dir: string;
  broker: BrokerController;
  front: GrpcFront;
  /** "127.0.0.1:<grpc port>" */
  endpoints: string;
  /** "127.0.0.1:<port>" of the in-process nameserver ('' without one). */
  namesrvAddr: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Client logger that drops everything (the client still writes ~/logs/rocketmq). */
export const quietClientLogger = {
  info() {},
  warn() {},
  error() {},
  debug() {},
  close() {},
} as never;

function fanOut(store: MessageStore, extra: (topic: string) => void): MessageStore {
  let inner: MessageArrivingListener | null = null;
  store.setMessageArrivingListener((topic, queueId, logicOffset, tagsCode, ts, props) => {
    inner?.(topic, queueId, logicOffset, tagsCode, ts, props);
    extra(topic);
  });
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'setMessageArrivingListener') return (l: MessageArrivingListener | null) => void (inner = l);
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

export async function startHarness(options: Record<string, string> = {}, logger: Logger = silentLogger, withNamesrv = false, storeDir?: string): Promise<Harness> {
  const dir = storeDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-grpc-'));
  let grpcPort = 0;
  let namesrv: NamesrvController | null = null;
  if (withNamesrv) {
    namesrv = new NamesrvController({ listenPort: 0, host: '127.0.0.1', logger });
    await namesrv.start();
  }
  const namesrvAddr = namesrv ? `127.0.0.1:${namesrv.port}` : '';
  const open = async (): Promise<{ broker: BrokerController; front: GrpcFront }> => {
    const raw: Record<string, string> = {
      storePathRootDir: dir,
      listenPort: '0',
      namesrvAddr,
      mappedFileSizeCommitLog: String(16 * 1024 * 1024),
      grpcListenHost: '127.0.0.1',
      grpcListenPort: String(grpcPort),
      ...options,
    };
    let front: GrpcFront | null = null;
    const store = fanOut(await DefaultMessageStore.open(resolveStoreConfig(raw), { logger }), (t) => front?.notifyMessageArriving(t));
    const broker = await BrokerController.create({ brokerConfig: raw, store, logger });
    await broker.start();
    front = await GrpcFront.create({ ctx: broker.ctx, pop: broker.popService, rawConfig: raw, transactions: broker.transactionService, recall: broker.recallMessageService, logger });
    await front.start();
    grpcPort = front.port;
    return { broker, front };
  };
  const first = await open();
  const h: Harness = {
    dir,
    broker: first.broker,
    front: first.front,
    endpoints: `127.0.0.1:${first.front.port}`,
    namesrvAddr,
    async restart() {
      await h.front.shutdown();
      await h.broker.shutdown();
      const next = await open();
      h.broker = next.broker;
      h.front = next.front;
    },
    async stop() {
      await h.front.shutdown();
      await h.broker.shutdown();
      await namesrv?.shutdown();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}
