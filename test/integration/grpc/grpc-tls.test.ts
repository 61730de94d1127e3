/**
 * TLS on the gRPC front (the broker's tls.server.*): permissive serves TLS and plain HTTP/2 on one
 * port (first byte), enforcing serves TLS only, disabled closes TLS clients with a warning. Judged
 * by grpc-js clients with SSL credentials (verifying the self-signed certificate for 127.0.0.1),
 * insecure ones and Node tls handshakes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoIncludeDir } from '../../../src/grpc/proto/messaging-service.js';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { GrpcFront } from '../../../src/grpc/grpc-front.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { ensureSelfSignedCertificate, type CertificateFiles } from '../../../src/common/tls/self-signed-certificate.js';
import { CaptureLogger } from '../../support/capture-logger.js';
import { tryTlsHandshake } from '../../support/tls-hello.js';

type Client = grpc.Client & Record<string, (...args: unknown[]) => unknown>;

function newClient(endpoints: string, credentials: grpc.ChannelCredentials): Client {
  const def = protoLoader.loadSync('apache/rocketmq/v2/service.proto', { includeDirs: [protoIncludeDir()], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { apache: { rocketmq: { v2: { MessagingService: new (a: string, c: grpc.ChannelCredentials) => Client } } } };
  return new pkg.apache.rocketmq.v2.MessagingService(endpoints, credentials);
}

function queryRoute(c: Client, topic: string): Promise<{ status: { code: string }; message_queues: unknown[] }> {
  const md = new grpc.Metadata();
  md.set('x-mq-client-id', 'tls-client@1');
  return new Promise((resolve, reject) =>
    (c.QueryRoute as (r: object, m: grpc.Metadata, o: grpc.CallOptions, cb: (e: Error | null, r: never) => void) => void).call(
      c, { topic: { name: topic }, endpoints: { scheme: 'IPv4', addresses: [{ host: '127.0.0.1', port: 1 }] } }, md, { deadline: Date.now() + 3000 }, (e, r) => (e ? reject(e) : resolve(r))));
}

describe('gRPC front over TLS', () => {
  let dir = '';
  let cert: CertificateFiles;
  let ca: Buffer;
  const stops: Array<() => Promise<void>> = [];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-grpc-tls-'));
    cert = await ensureSelfSignedCertificate(path.join(dir, 'tls'));
    ca = fs.readFileSync(cert.certPath);
  });
  after(async () => {
    for (const s of stops.reverse()) await s();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function start(mode: string, logger = silentLogger, badInputLogIntervalMs?: number): Promise<string> {
    const raw: Record<string, string> = {
      storePathRootDir: path.join(dir, mode),
      listenPort: '0',
      namesrvAddr: '',
      haListenPort: '0',
      mappedFileSizeCommitLog: String(4 * 1024 * 1024),
      grpcListenHost: '127.0.0.1',
      grpcListenPort: '0',
      'tls.server.mode': mode,
      'tls.server.certPath': cert.certPath,
      'tls.server.keyPath': cert.keyPath,
    };
    const broker = await BrokerController.create({ brokerConfig: raw, logger: silentLogger });
    await broker.start();
    const front = await GrpcFront.create({ ctx: broker.ctx, pop: broker.popService, rawConfig: raw, transactions: broker.transactionService, logger, tls: broker.tls, badInputLogIntervalMs });
    await front.start();
    stops.push(async () => {
      await front.shutdown();
      await broker.shutdown();
    });
    return `127.0.0.1:${front.port}`;
  }

  it('permissive: a TLS client (certificate verified) and a plain client both get QueryRoute answers on one port', async () => {
    const endpoints = await start('permissive');
    const secure = newClient(endpoints, grpc.credentials.createSsl(ca));
    const plain = newClient(endpoints, grpc.credentials.createInsecure());
    try {
      const a = await queryRoute(secure, 'TBW102');
      const b = await queryRoute(plain, 'TBW102');
      // the handler ran: TBW102 is a system topic, refused by QueryRoute
      assert.equal(a.status.code, 'ILLEGAL_TOPIC');
      assert.equal(b.status.code, 'ILLEGAL_TOPIC');
    } finally {
      secure.close();
      plain.close();
    }
  });

  it('enforcing: a TLS client is answered, a plain client fails with UNAVAILABLE', async () => {
    const endpoints = await start('enforcing');
    const secure = newClient(endpoints, grpc.credentials.createSsl(ca));
    const plain = newClient(endpoints, grpc.credentials.createInsecure());
    try {
      assert.equal((await queryRoute(secure, 'TBW102')).status.code, 'ILLEGAL_TOPIC');
      await assert.rejects(queryRoute(plain, 'TBW102'), (e: grpc.ServiceError) => e.code === grpc.status.UNAVAILABLE);
    } finally {
      secure.close();
      plain.close();
    }
  });

  it('disabled: a TLS client (what rocketmq-client-java 5 does by default) is closed with one warning per interval naming it and the fix; plain clients are served', async () => {
    const logger = new CaptureLogger();
    const endpoints = await start('disabled', logger, 400);
    const port = Number(endpoints.split(':')[1]);
    const plain = newClient(endpoints, grpc.credentials.createInsecure());
    try {
      const first = await tryTlsHandshake(port);
      assert.equal(first.secureConnected, false);
      await tryTlsHandshake(port);
      const warned = (): string[] => logger.matching('warn', 'TLS handshake from');
      assert.equal(warned().length, 1, warned().join('\n'));
      assert.match(warned()[0]!, new RegExp(`^TLS handshake from 127\\.0\\.0\\.1:${first.localPort} on the plaintext gRPC port \\(tls\\.server\\.mode=disabled\\), connection closed: use enableSsl\\(false\\) on the client .* or set tls\\.server\\.mode=permissive .* or enforcing`));
      assert.equal((await queryRoute(plain, 'TBW102')).status.code, 'ILLEGAL_TOPIC', 'plain clients keep being served');
      await new Promise((r) => setTimeout(r, 450));
      await tryTlsHandshake(port);
      assert.equal(warned().length, 2, 'the next interval logs again');
      assert.match(warned()[1]!, /\(\+1 similar suppressed\)$/);
      assert.equal((await queryRoute(plain, 'TBW102')).status.code, 'ILLEGAL_TOPIC');
    } finally {
      plain.close();
    }
  });
});
