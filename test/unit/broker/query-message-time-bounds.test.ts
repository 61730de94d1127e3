import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerHarness } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { getTimestampBound } from '../../../src/broker/processors/query-message-processors.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

describe('QUERY_MESSAGE (12) time bounds from Java clients', () => {
  it('endTimestamp Long.MAX_VALUE (DefaultMQAdminExt.queryMessage / viewMessage(topic, uniqId)) finds the message', async () => {
    h = await BrokerHarness.create();
    await h.send('TQ', 'keyed', { props: { KEYS: 'sync-3', UNIQ_KEY: '0A000001ABCD' } });
    const byKey = await h.call(RequestCode.QUERY_MESSAGE, { topic: 'TQ', key: 'sync-3', maxNum: '32', beginTimestamp: '0', endTimestamp: '9223372036854775807' });
    assert.equal(byKey.code, ResponseCode.SUCCESS);
    assert.equal(decodeRecord(byKey.body!, 0).body.toString(), 'keyed');
    const byUniq = await h.call(RequestCode.QUERY_MESSAGE, {
      topic: 'TQ',
      key: '0A000001ABCD',
      maxNum: '32',
      beginTimestamp: String(h.clock.nowMs() - 1000),
      endTimestamp: '9223372036854775807',
      _UNIQUE_KEY_QUERY: 'true',
    });
    assert.equal(byUniq.code, ResponseCode.SUCCESS);
  });

  it('getTimestampBound clamps integers beyond ±2^53 and still rejects non-numbers', () => {
    assert.equal(getTimestampBound({ t: '9223372036854775807' }, 't'), Number.MAX_SAFE_INTEGER);
    assert.equal(getTimestampBound({ t: '-9223372036854775808' }, 't'), Number.MIN_SAFE_INTEGER);
    assert.equal(getTimestampBound({ t: 2 ** 60 }, 't'), Number.MAX_SAFE_INTEGER);
    assert.equal(getTimestampBound({ t: '1700000000000' }, 't'), 1_700_000_000_000);
    assert.throws(() => getTimestampBound({ t: 'soon' }, 't'), /the custom field <t> is not a number: soon/);
    assert.throws(() => getTimestampBound({}, 't'), /the custom field <t> is null/);
  });
});
