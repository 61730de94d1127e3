/**
 * The nameserver of `tsmq start` authenticates with the broker's users (NamesrvAuthGate): before
 * it is armed it answers SYSTEM_BUSY; then unsigned and badly signed requests get NO_PERMISSION
 * (16) with Apache's remarks (a forged REGISTER_BROKER changes no route), signed ones are served,
 * route lookups stay open, and the broker's own registration (signed with the
 * initAuthenticationUser when no inner credentials are set) gets through. Wired as runStart wires
 * it, in one process.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NamesrvController } from '../../../src/namesrv/namesrv-controller.js';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { NamesrvAuthGate } from '../../../src/broker/auth/namesrv-auth-gate.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { RateLimitedLog } from '../../../src/common/logging/rate-limited-log.js';
import { signRemotingCommand } from '../../../src/auth/acl-signature.js';
import { waitUntil } from '../../support/ha-cluster.js';

const ROOT = { accessKey: 'root', secretKey: 'root-secret-1' };

describe('nameserver authentication (tsmq start wiring)', () => {
  let dir = '';
  let namesrv: NamesrvController;
  let broker: BrokerController;
  let gate: NamesrvAuthGate;
  let client: RemotingClient;
  const call = (code: number, ext: Record<string, string>, sign?: { accessKey: string; secretKey: string }, body?: Buffer) => {
    const cmd = createRequestCommand(code, ext, body ?? null);
    return client.invokeSync(`127.0.0.1:${namesrv.port}`, sign ? signRemotingCommand(cmd, sign) : cmd, 3000);
  };
  const route = (sign?: { accessKey: string; secretKey: string }) => call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'TBW102' }, sign);
  const clusterInfo = (sign?: { accessKey: string; secretKey: string }) => call(RequestCode.GET_BROKER_CLUSTER_INFO, {}, sign);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsmq-ns-auth-'));
    gate = new NamesrvAuthGate(new RateLimitedLog(silentLogger));
    namesrv = new NamesrvController({ listenPort: 0, host: '127.0.0.1', requestGate: gate });
    await namesrv.start();
    client = new RemotingClient();
  });
  after(async () => {
    await client?.close();
    await broker?.shutdown();
    await namesrv?.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses everything with SYSTEM_BUSY until armed', async () => {
    const r = await route(ROOT);
    assert.equal(r.code, ResponseCode.SYSTEM_BUSY);
    assert.equal(r.remark, 'nameserver is starting');
  });

  it('armed: the broker registers (signed by its init user), signed requests are served, unsigned and forged ones refused, route lookups stay open', async () => {
    broker = await BrokerController.create({
      brokerConfig: {
        storePathRootDir: dir, listenPort: '0', haListenPort: '0', bindAddress: '127.0.0.1', namesrvAddr: `127.0.0.1:${namesrv.port}`,
        mappedFileSizeCommitLog: String(1024 * 1024), authenticationEnabled: 'true', authorizationEnabled: 'true',
        initAuthenticationUser: JSON.stringify({ username: ROOT.accessKey, password: ROOT.secretKey }),
      },
      logger: silentLogger,
    });
    gate.arm(broker.authConfig, broker.authMetadata);
    await broker.start();
    await waitUntil(async () => (await route()).code === ResponseCode.SUCCESS, 10_000, () => 'TBW102 route (open) after the broker registered');
    const served = await clusterInfo(ROOT);
    assert.equal(served.code, ResponseCode.SUCCESS);
    assert.match(served.body!.toString(), /broker-a/);
    const unsigned = await clusterInfo();
    assert.equal(unsigned.code, ResponseCode.NO_PERMISSION);
    assert.equal(unsigned.remark, 'username cannot be null.');
    const forged = await clusterInfo({ accessKey: ROOT.accessKey, secretKey: 'guess' });
    assert.equal(forged.code, ResponseCode.NO_PERMISSION);
    assert.equal(forged.remark, 'check signature failed.');
    const stranger = await clusterInfo({ accessKey: 'nobody', secretKey: 'x' });
    assert.equal(stranger.code, ResponseCode.NO_PERMISSION);
    assert.equal(stranger.remark, 'User:nobody is not found.');
    // a rogue broker's unsigned registration and deletion are refused and change nothing
    const rogue = Buffer.from(JSON.stringify({ topicConfigSerializeWrapper: { topicConfigTable: { Hijack: { topicName: 'Hijack', readQueueNums: 1, writeQueueNums: 1, perm: 6 } }, dataVersion: { timestamp: 1, counter: 1 } }, filterServerList: [] }));
    const reg = await call(RequestCode.REGISTER_BROKER, { brokerName: 'rogue', brokerAddr: '10.9.9.9:10911', clusterName: 'DefaultCluster', haServerAddr: '10.9.9.9:10912', brokerId: '0', compressed: 'false' }, undefined, rogue);
    assert.equal(reg.code, ResponseCode.NO_PERMISSION);
    const del = await call(RequestCode.DELETE_TOPIC_IN_NAMESRV, { topic: 'TBW102' });
    assert.equal(del.code, ResponseCode.NO_PERMISSION);
    const hijack = await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'Hijack' });
    assert.doesNotMatch(hijack.body?.toString() ?? '', /rogue|10\.9\.9\.9/);
    assert.doesNotMatch((await clusterInfo(ROOT)).body!.toString(), /rogue|10\.9\.9\.9/);
    assert.equal((await route()).code, ResponseCode.SUCCESS);
  });

  it('a code the nameserver does not serve: unsigned → 16 first, signed → 3 (the broker\'s order)', async () => {
    const unsigned = await call(9999, {});
    assert.deepEqual([unsigned.code, unsigned.remark], [ResponseCode.NO_PERMISSION, 'username cannot be null.']);
    const signed = await call(9999, {}, ROOT);
    assert.deepEqual([signed.code, signed.remark], [ResponseCode.REQUEST_CODE_NOT_SUPPORTED, ' request type 9999 not supported']);
  });
});
