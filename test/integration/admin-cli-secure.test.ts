/**
 * `tsmq admin` against `tsmq start --tls enforcing` with ACL 2.0 on (authentication and
 * authorization): without `--tls` the connection is closed, without credentials the broker and the
 * nameserver refuse; with `--tls` (or `--tls-ca` on the generated certificate) and
 * `--access-key`/`--secret-key` (or TSMQ_ACCESS_KEY/TSMQ_SECRET_KEY) the commands work, as mqadmin
 * does with `-Dtls.enable=true` and conf/tools.yml.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../support/tsmq-process.js';
import { runAdminCli as runCli } from '../support/admin-cli-runner.js';

describe('tsmq admin with TLS and ACL 2.0 credentials', { timeout: 120_000 }, () => {
  let storeDir: string;
  let tsmq: TsmqProcess;
  const creds = ['--access-key', 'rocketmq2', '--secret-key', '12345678'];

  before(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-admin-secure-'));
    tsmq = await TsmqProcess.start({
      storeDir,
      extraArgs: ['--tls', 'enforcing'],
      options: { authenticationEnabled: 'true', authorizationEnabled: 'true', initAuthenticationUser: '{"username":"rocketmq2","password":"12345678"}' },
    });
  });

  after(async () => {
    await tsmq?.stop();
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('without --tls the enforcing broker closes the connection; without credentials the nameserver and the broker refuse (16)', async () => {
    const plain = await runCli(['topic-list', '-n', tsmq.namesrvAddr, '--timeout', '3000', ...creds]);
    assert.ok(plain.error, 'plain TCP to a TLS-only port fails');
    const anonymousNs = await runCli(['topic-list', '-n', tsmq.namesrvAddr, '--tls']);
    assert.match(anonymousNs.error?.message ?? '', /code 16 \(NO_PERMISSION\)/);
    const anonymousBroker = await runCli(['update-topic', '-b', tsmq.brokerAddr, '-t', 'SEC_T0', '--tls']);
    assert.match(anonymousBroker.error?.message ?? '', /code 16 \(NO_PERMISSION\)/);
    const wrong = await runCli(['update-topic', '-b', tsmq.brokerAddr, '-t', 'SEC_T0', '--tls', '--access-key', 'rocketmq2', '--secret-key', 'nope']);
    assert.match(wrong.error?.message ?? '', /code 16 \(NO_PERMISSION\)/);
  });

  it('--tls with the credentials of the super user: update-topic on the broker, topic-list and topic-route on the nameserver', async () => {
    const created = await runCli(['update-topic', '-b', tsmq.brokerAddr, '-t', 'SEC_T1', '-r', '2', '-w', '2', '--tls', ...creds]);
    assert.equal(created.error, null, created.error?.message);
    assert.equal(created.out[0], `create topic to ${tsmq.brokerAddr} success.`);
    const list = await runCli(['topic-list', '-n', tsmq.namesrvAddr, '--tls', ...creds, '--json']);
    assert.equal(list.error, null, list.error?.message);
    assert.ok((JSON.parse(list.out.join('\n')) as { topicList: string[] }).topicList.includes('SEC_T1'));
  });

  it('--tls-ca verifies the generated certificate; credentials from TSMQ_ACCESS_KEY / TSMQ_SECRET_KEY; a key without its secret is an error', async () => {
    process.env.TSMQ_ACCESS_KEY = 'rocketmq2';
    process.env.TSMQ_SECRET_KEY = '12345678';
    try {
      const route = await runCli(['topic-route', '-n', tsmq.namesrvAddr, '-t', 'SEC_T1', '--tls-ca', join(storeDir, 'tls', 'tsmq-local.crt'), '--json']);
      assert.equal(route.error, null, route.error?.message);
      const queueDatas = (JSON.parse(route.out.join('\n')) as { queueDatas: Array<{ readQueueNums: number }> }).queueDatas;
      assert.deepEqual(queueDatas.map((q) => q.readQueueNums), [2]);
    } finally {
      delete process.env.TSMQ_ACCESS_KEY;
      delete process.env.TSMQ_SECRET_KEY;
    }
    const half = await runCli(['topic-list', '-n', tsmq.namesrvAddr, '--tls', '--access-key', 'rocketmq2']);
    assert.match(half.error?.message ?? '', /--access-key and --secret-key .* go together/);
  });
});
