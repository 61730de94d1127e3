/**
 * Request codes a broker no longer serves but a caller may still send (ACL 1.0's 50-54 from a 4.9
 * mqadmin after an upgrade): still REQUEST_CODE_NOT_SUPPORTED (3) with Apache's remark, followed by
 * what to use instead, for the caller and in the log. A gate runs first (Apache 5.3.3's broker sends
 * an unknown code to its default processor, behind the auth pipeline): an unauthenticated caller
 * gets the gate's refusal, an authenticated one code 3 and the explanation.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProcessorTable } from '../../../src/remoting/transport/processor-table.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import type { Logger } from '../../../src/common/logging/logger.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import type { RemotingChannel } from '../../../src/remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { ACL_V1_RETIRED_CODES } from '../../../src/broker/auth/acl-v1-retired-codes.js';

function channel(sent: RemotingCommand[]): RemotingChannel {
  return { id: 'c1', remoteAddress: '127.0.0.1:1', closed: false, send: (cmd) => void sent.push(cmd), close() {}, onClose() {} };
}

test('a retired code: the gate first (told there is no handler); let through: code 3, Apache\'s remark and the explanation; the log line too', async () => {
  const warnings: string[] = [];
  const table = new ProcessorTable({ ...silentLogger, warn: (m: string) => void warnings.push(m) } as Logger);
  const asked: Array<[number, boolean]> = [];
  table.setGate({
    check: (_c, r, handled) => {
      asked.push([r.code, handled]);
      return r.extFields?.AccessKey === 'ak' ? null : { code: 16, remark: 'No user' };
    },
  });
  for (const [code, why] of ACL_V1_RETIRED_CODES) table.retire(code, why);
  const sent: RemotingCommand[] = [];
  await table.dispatch(channel(sent), createRequestCommand(50, {}));
  assert.deepEqual([sent[0]!.code, sent[0]!.remark], [16, 'No user']);
  assert.deepEqual(warnings, []);
  sent.length = 0;
  await table.dispatch(channel(sent), createRequestCommand(50, { AccessKey: 'ak' }));
  assert.deepEqual(asked, [[50, false], [50, false]]);
  assert.equal(sent[0]!.code, 3);
  assert.equal(
    sent[0]!.remark,
    ' request type 50 not supported (UPDATE_AND_CREATE_ACL_CONFIG is ACL 1.0, removed in Apache RocketMQ 5.3.3 as in tsmq: manage users and ACLs with mqadmin 5.x createUser/createAcl/updateAcl; plain_acl.yml is read only by migrateAuthFromV1Enabled=true at start; docs/security.md "From ACL 1.0")',
  );
  assert.deepEqual(warnings, [`127.0.0.1:1${sent[0]!.remark}`]);
  for (const code of [51, 52, 53, 54]) {
    await table.dispatch(channel(sent), createRequestCommand(code, { AccessKey: 'ak' }));
    assert.match(sent.at(-1)!.remark ?? '', new RegExp(`^ request type ${code} not supported \\((DELETE_ACL_CONFIG|GET_BROKER_CLUSTER_ACL_INFO|UPDATE_GLOBAL_WHITE_ADDRS_CONFIG|GET_BROKER_CLUSTER_ACL_CONFIG) is ACL 1\\.0, removed`));
  }
});

test('any other unknown code keeps Apache\'s remark alone', async () => {
  const table = new ProcessorTable(silentLogger);
  table.retire(50, 'x');
  const sent: RemotingCommand[] = [];
  await table.dispatch(channel(sent), createRequestCommand(9999, {}));
  assert.deepEqual([sent[0]!.code, sent[0]!.remark], [3, ' request type 9999 not supported']);
});
