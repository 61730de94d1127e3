/**
 * innerClientAuthenticationCredentials: the broker signs its own requests. A master with
 * authenticationEnabled + authorizationEnabled refuses an unsigned slave's synchronisation calls
 * (GET_ALL_TOPIC_CONFIG & co. need Cluster Get) and serves a slave that signs them with the inner
 * credentials (created as a Super user on the master). Real nameserver, two real brokers, one
 * process; plus the RemotingClient hook itself against the master.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NamesrvController } from '../../../src/namesrv/namesrv-controller.js';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { signRemotingCommand } from '../../../src/auth/acl-signature.js';
import { innerRequestSigner } from '../../../src/broker/auth/inner-request-signer.js';
import { waitUntil } from '../../support/ha-cluster.js';

const INNER = { accessKey: 'broker-inner', secretKey: 'inner-secret-1' };
const ADMIN = { accessKey: 'admin', secretKey: 'admin-secret-1' };

describe('the broker signs its own requests with innerClientAuthenticationCredentials', () => {
  let dir = '';
  let namesrv: NamesrvController;
  let master: BrokerController;
  const brokers: BrokerController[] = [];

  const conf = (name: string, extra: Record<string, string>): Record<string, string> => ({
    storePathRootDir: join(dir, name),
    listenPort: '0',
    haListenPort: '0',
    bindAddress: '127.0.0.1',
    namesrvAddr: `127.0.0.1:${namesrv.port}`,
    brokerName: 'broker-a',
    mappedFileSizeCommitLog: String(1024 * 1024),
    slaveSynchronizeInterval: '200',
    ...extra,
  });

  async function startBroker(name: string, extra: Record<string, string>): Promise<BrokerController> {
    const b = await BrokerController.create({ brokerConfig: conf(name, extra), logger: silentLogger });
    brokers.push(b);
    await b.start();
    return b;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsmq-inner-sign-'));
    namesrv = new NamesrvController({ listenPort: 0, host: '127.0.0.1' });
    await namesrv.start();
    master = await startBroker('master', {
      brokerRole: 'ASYNC_MASTER',
      authenticationEnabled: 'true',
      authorizationEnabled: 'true',
      initAuthenticationUser: JSON.stringify({ username: ADMIN.accessKey, password: ADMIN.secretKey }),
      innerClientAuthenticationCredentials: JSON.stringify(INNER),
    });
    const admin = new RemotingClient();
    try {
      const create = createRequestCommand(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: 'InnerSignedTopic', defaultTopic: 'TBW102', readQueueNums: 3, writeQueueNums: 3, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false });
      const r = await admin.invokeSync(master.brokerAddr, signRemotingCommand(create, ADMIN), 3000);
      assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    } finally {
      await admin.close();
    }
  });

  after(async () => {
    for (const b of brokers.reverse()) await b.shutdown();
    await namesrv?.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  it('RemotingClient beforeRequest: unsigned GET_ALL_TOPIC_CONFIG is refused, signed with the inner credentials it is served', async () => {
    const plain = new RemotingClient();
    const signed = new RemotingClient(innerRequestSigner(master.authConfig));
    try {
      const refused = await plain.invokeSync(master.brokerAddr, createRequestCommand(RequestCode.GET_ALL_TOPIC_CONFIG, null), 3000);
      assert.equal(refused.code, ResponseCode.NO_PERMISSION);
      assert.equal(refused.remark, 'username cannot be null.');
      const served = await signed.invokeSync(master.brokerAddr, createRequestCommand(RequestCode.GET_ALL_TOPIC_CONFIG, null), 3000);
      assert.equal(served.code, ResponseCode.SUCCESS, served.remark ?? '');
      assert.match(served.body!.toString(), /InnerSignedTopic/);
    } finally {
      await plain.close();
      await signed.close();
    }
  });

  it('a slave with the inner credentials synchronises the master topic configs; one without them is refused', async () => {
    const good = await startBroker('slave-signed', { brokerRole: 'SLAVE', brokerId: '1', innerClientAuthenticationCredentials: JSON.stringify(INNER) });
    await waitUntil(() => good.ctx.topicConfigManager.selectTopicConfig('InnerSignedTopic') !== undefined, 10_000, () => JSON.stringify(good.replication?.stats().lastSync));
    assert.equal(good.ctx.topicConfigManager.selectTopicConfig('InnerSignedTopic')?.readQueueNums, 3);
    const bad = await startBroker('slave-unsigned', { brokerRole: 'SLAVE', brokerId: '2' });
    await waitUntil(() => (bad.replication?.stats().lastSync?.errors.length ?? 0) > 0, 10_000, () => JSON.stringify(bad.replication?.stats().lastSync));
    assert.match(JSON.stringify(bad.replication?.stats().lastSync?.errors), /username cannot be null|16/);
    assert.equal(bad.ctx.topicConfigManager.selectTopicConfig('InnerSignedTopic'), undefined);
  });
});
