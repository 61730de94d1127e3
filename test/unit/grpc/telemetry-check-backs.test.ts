/**
 * grpcTransactionChecker: a producer whose Telemetry stream is backed up (its writer drops the
 * command) is skipped for another producer of the topic; with none left the check reports
 * "not sent" so the transaction service retries at its next round.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClientSessions, type TelemetryWriter } from '../../../src/grpc/client-sessions.js';
import { grpcTransactionChecker } from '../../../src/grpc/telemetry-handler.js';
import type { TelemetryCommand } from '../../../src/grpc/proto/v2-types.js';
import type { CheckRequest } from '../../../src/broker/transaction/transactional-message-service.js';
import type { MessageExt } from '../../../src/common/message/message.js';
import { socketAddressOf } from '../../../src/common/message/msgid.js';

function writer(accepts: boolean): TelemetryWriter & { got: TelemetryCommand[] } {
  const got: TelemetryCommand[] = [];
  return {
    got,
    closed: false,
    write(cmd) {
      if (!accepts) return false;
      got.push(cmd);
      return true;
    },
    end() {},
  };
}

const message = {
  topic: 'TX_T', queueId: 0, flag: 0, body: Buffer.from('x'), properties: new Map([['UNIQ_KEY', 'U1']]), sysFlag: 0, bornTimestamp: 1, bornHost: socketAddressOf('127.0.0.1', 1),
  storeHost: socketAddressOf('127.0.0.1', 2), reconsumeTimes: 0, preparedTransactionOffset: 0, queueOffset: 0, commitLogOffset: 0, storeTimestamp: 1, storeSize: 0, bodyCRC: 0, msgId: 'M1',
} as unknown as MessageExt;
const req: CheckRequest = { message, producerGroup: 'PG', transactionId: 'T1', halfQueueOffset: 0, commitLogOffset: 0 };

test('a backed-up producer stream is skipped; none left → not sent', () => {
  const sessions = new ClientSessions(() => 0);
  const slow = writer(false);
  const fast = writer(true);
  for (const [id, w] of [['slow@1', slow], ['fast@1', fast]] as const) {
    const s = sessions.touch(id);
    s.clientType = 'PRODUCER';
    s.settings = { publishing: { topics: [{ name: 'TX_T' }] } } as never;
    s.streams.add(w);
  }
  const check = grpcTransactionChecker(sessions);
  assert.equal(check(req), true);
  assert.equal(check(req), true);
  assert.equal(fast.got.length, 2, 'both check-backs went to the producer that reads');
  assert.equal((fast.got[0] as { recover_orphaned_transaction_command: { transaction_id: string } }).recover_orphaned_transaction_command.transaction_id, 'T1');

  const onlySlow = new ClientSessions(() => 0);
  const s = onlySlow.touch('slow@1');
  s.clientType = 'PRODUCER';
  s.streams.add(writer(false));
  assert.equal(grpcTransactionChecker(onlySlow)(req), false);
});
