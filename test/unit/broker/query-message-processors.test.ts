import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerHarness } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { decodeMessageId } from '../../../src/common/message/msgid.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

describe('QUERY_MESSAGE (12) / VIEW_MESSAGE_BY_ID (33)', () => {
  it('finds messages by key and by offset msgId', async () => {
    h = await BrokerHarness.create();
    const sent = await h.send('TK', 'keyed', { props: { KEYS: 'order-1 order-2', UNIQ_KEY: 'U1' } });
    await h.send('TK', 'other', { props: { KEYS: 'order-3' } });
    const now = h.clock.nowMs();
    const q = await h.call(RequestCode.QUERY_MESSAGE, { topic: 'TK', key: 'order-2', maxNum: 10, beginTimestamp: 0, endTimestamp: now });
    assert.equal(q.code, ResponseCode.SUCCESS);
    assert.equal(decodeRecord(q.body!, 0).body.toString(), 'keyed');
    assert.equal(q.body!.length, decodeRecord(q.body!, 0).storeSize);
    const u = await h.call(RequestCode.QUERY_MESSAGE, { topic: 'TK', key: 'U1', maxNum: 1, beginTimestamp: 0, endTimestamp: now, _UNIQUE_KEY_QUERY: 'true' });
    assert.equal(u.code, ResponseCode.SUCCESS);
    const none = await h.call(RequestCode.QUERY_MESSAGE, { topic: 'TK', key: 'nope', maxNum: 10, beginTimestamp: 0, endTimestamp: now });
    assert.equal(none.code, ResponseCode.QUERY_NOT_FOUND);
    const { commitLogOffset } = decodeMessageId(String(sent.extFields!.msgId));
    const v = await h.call(RequestCode.VIEW_MESSAGE_BY_ID, { offset: commitLogOffset });
    assert.equal(v.code, ResponseCode.SUCCESS);
    assert.equal(decodeRecord(v.body!, 0).body.toString(), 'keyed');
    const missing = await h.call(RequestCode.VIEW_MESSAGE_BY_ID, { offset: 999999 });
    assert.equal(missing.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(missing.remark, 'can not find message by the offset, 999999');
  });
});
