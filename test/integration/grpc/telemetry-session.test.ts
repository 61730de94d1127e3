/**
 * The Telemetry stream and the client session it belongs to, over raw grpc-js calls (the
 * messages rocketmq-client-java sends): a producer that called NotifyClientTermination and then
 * sends its settings again on the same, still open stream (a client restarted in place, or a
 * termination racing a settings refresh) is a live producer again: listed by
 * GET_PRODUCER_CONNECTION_LIST under its topic, and its transactions are checked back over that
 * stream (RecoverOrphanedTransactionCommand). Before the handler looked the session up per
 * command, the settings updated the removed session: no check-back ever reached the producer.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoIncludeDir } from '../../../src/grpc/proto/messaging-service.js';
import { startHarness, type Harness } from './grpc-harness.js';
import { invokeInProcess } from '../../../src/console/in-process-request.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';

type Client = grpc.Client & Record<string, (...args: unknown[]) => unknown>;
type Cmd = Record<string, unknown>;

const CLIENT_ID = 'tx-restart@1';
const TOPIC = 'TS_TX';

function newClient(endpoints: string): Client {
  const def = protoLoader.loadSync('apache/rocketmq/v2/service.proto', { includeDirs: [protoIncludeDir()], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { apache: { rocketmq: { v2: { MessagingService: new (a: string, c: grpc.ChannelCredentials) => Client } } } };
  return new pkg.apache.rocketmq.v2.MessagingService(endpoints, grpc.credentials.createInsecure());
}

const metadata = (): grpc.Metadata => {
  const md = new grpc.Metadata();
  md.set('x-mq-client-id', CLIENT_ID);
  return md;
};

function unary<T>(c: Client, rpc: string, req: object): Promise<T> {
  return new Promise((resolve, reject) => (c[rpc] as (r: object, m: grpc.Metadata, cb: (e: Error | null, r: T) => void) => void).call(c, req, metadata(), (e, r) => (e ? reject(e) : resolve(r))));
}

describe('Telemetry session after NotifyClientTermination', { timeout: 30_000 }, () => {
  let h: Harness;
  let client: Client;

  before(async () => {
    h = await startHarness({ transactionTimeOut: '300', transactionCheckInterval: '200' });
    client = newClient(h.endpoints);
  });

  after(async () => {
    client?.close();
    await h?.stop();
  });

  it('settings sent again on the same stream after NotifyClientTermination make a live producer: listed, and its transaction is checked back over that stream', async () => {
    const duplex = (client.Telemetry as (m: grpc.Metadata) => grpc.ClientDuplexStream<object, Cmd>).call(client, metadata());
    const got: Cmd[] = [];
    duplex.on('data', (c: Cmd) => got.push(c));
    duplex.on('error', () => {});
    const waitFor = async (pred: () => boolean, ms: number, what: string): Promise<void> => {
      const deadline = Date.now() + ms;
      while (!pred()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(got.map((c) => c.command))}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const settings = { settings: { client_type: 'PRODUCER', publishing: { topics: [{ name: TOPIC }] }, user_agent: { language: 'JAVA', version: '5.0.8' } } };
    duplex.write(settings);
    await waitFor(() => got.length === 1, 5000, 'the first settings reply');

    const term = await unary<{ status: { code: string } }>(client, 'NotifyClientTermination', {});
    assert.equal(term.status.code, 'OK');
    assert.equal(h.front.sessions.get(CLIENT_ID), undefined, 'the session ended');

    duplex.write(settings);
    await waitFor(() => got.length === 2, 5000, 'the second settings reply');
    assert.equal(got[1]!.command, 'settings');

    const listed = await invokeInProcess(h.broker, createRequestCommand(RequestCode.GET_PRODUCER_CONNECTION_LIST, { producerGroup: TOPIC }));
    assert.equal(listed.code, ResponseCode.SUCCESS, listed.remark ?? '');
    assert.deepEqual((JSON.parse(listed.body!.toString()) as { connectionSet: Array<{ clientId: string }> }).connectionSet.map((c) => c.clientId), [CLIENT_ID]);

    const sent = await unary<{ status: { code: string }; entries: Array<{ transaction_id: string }> }>(client, 'SendMessage', {
      messages: [{
        topic: { name: TOPIC },
        user_properties: {},
        body: Buffer.from('half'),
        system_properties: { keys: ['tx-0'], message_id: 'TSTX0', body_encoding: 'IDENTITY', message_type: 'TRANSACTION', born_host: 'h', orphaned_transaction_recovery_duration: { seconds: 0, nanos: 300_000_000 } },
      }],
    });
    assert.equal(sent.status.code, 'OK', JSON.stringify(sent));
    await waitFor(() => got.some((c) => c.command === 'recover_orphaned_transaction_command'), 15_000, 'a RecoverOrphanedTransactionCommand');
    const recover = got.find((c) => c.command === 'recover_orphaned_transaction_command')!.recover_orphaned_transaction_command as { transaction_id: string; message: { system_properties: { message_id: string } } };
    assert.equal(recover.message.system_properties.message_id, 'TSTX0');
    assert.equal(recover.transaction_id, sent.entries[0]!.transaction_id);
    duplex.end();
  });
});
