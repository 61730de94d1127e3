/**
 * One server process of bench/broker/topic-registration.ts: a tsmq nameserver or broker taken
 * from the checkout at <root> (so one run can compare two checkouts). Prints `READY <port>` when
 * it serves; stops on SIGTERM.
 *
 *   tsx bench/broker/topic-registration-server.ts <root> namesrv
 *   tsx bench/broker/topic-registration-server.ts <root> broker <namesrvAddr> <storeDir>
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [root, kind, namesrvAddr, storeDir] = process.argv.slice(2);
if (!root || (kind !== 'namesrv' && kind !== 'broker')) {
  console.error('usage: topic-registration-server.ts <root> namesrv | broker <namesrvAddr> <storeDir>');
  process.exit(2);
}
const mod = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(join(root, rel)).href)) as T;
const { silentLogger } = await mod<{ silentLogger: unknown }>('src/common/logging/logger.ts');

let stop: () => Promise<void>;
if (kind === 'namesrv') {
  const { NamesrvController } = await mod<{ NamesrvController: new (o: object) => { start(): Promise<void>; shutdown(): Promise<void>; port: number } }>('src/namesrv/namesrv-controller.ts');
  const n = new NamesrvController({ listenPort: 0, host: '127.0.0.1', logger: silentLogger });
  await n.start();
  stop = () => n.shutdown();
  console.log(`READY ${n.port}`);
} else {
  type Broker = { start(): Promise<void>; shutdown(): Promise<void>; port: number };
  const { BrokerController } = await mod<{ BrokerController: { create(o: object): Promise<Broker> } }>('src/broker/broker-controller.ts');
  const b = await BrokerController.create({
    brokerConfig: { storePathRootDir: storeDir!, listenPort: '0', namesrvAddr: namesrvAddr!, brokerName: 'broker-a', mappedFileSizeCommitLog: String(4 * 1024 * 1024) },
    logger: silentLogger,
  });
  await b.start();
  stop = () => b.shutdown();
  console.log(`READY ${b.port}`);
}
process.on('SIGTERM', () => void stop().finally(() => process.exit(0)));
