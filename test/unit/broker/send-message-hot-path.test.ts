/**
 * The per-message shortcuts of the single-send path: the header key tables, the bornHost cache
 * per channel, and the exact reply header a stored send produces (JSON and ROCKETMQ).
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerHarness, FakeChannel } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { encodeFrame } from '../../../src/remoting/protocol/frame-codec.js';
import { createMessageId, socketAddressFromString } from '../../../src/common/message/msgid.js';
import { decodeByNames, decodeSendMessageHeader, SEND_HEADER_V2_KEYS, V2_KEY_OF } from '../../../src/broker/processors/send-message-header.js';
import { bornHostOf, bornHostOfChannel } from '../../../src/broker/processors/send-message-processor.js';

const V1 = {
  producerGroup: 'PID_X', topic: 'TopicA', defaultTopic: 'TBW102', defaultTopicQueueNums: 4, queueId: 1, sysFlag: 0,
  bornTimestamp: 1_700_000_000_123, flag: 0, properties: 'TAGS\u0001T\u0002', reconsumeTimes: 2, unitMode: false,
  maxReconsumeTimes: 16, batch: false, brokerName: 'broker-a',
};

function v2Of(v1: Record<string, string | number | boolean>): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [letter, name] of Object.entries(SEND_HEADER_V2_KEYS)) if (name in v1) out[letter] = v1[name]!;
  return out;
}

let h: BrokerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('send header decode', () => {
  it('V1 names (10) and V2 letters (310) give the same header, JSON-typed or all strings', () => {
    const asStrings = Object.fromEntries(Object.entries(V1).map(([k, v]) => [k, String(v)]));
    const want = { ...V1 };
    for (const ext of [V1, asStrings]) {
      assert.deepEqual(decodeSendMessageHeader(createRequestCommand(RequestCode.SEND_MESSAGE, ext)), want);
      assert.deepEqual(decodeSendMessageHeader(createRequestCommand(RequestCode.SEND_MESSAGE_V2, v2Of(ext))), want);
      assert.deepEqual(decodeSendMessageHeader(createRequestCommand(RequestCode.SEND_BATCH_MESSAGE, v2Of(ext))), want);
    }
  });

  it('only the fields present are set; a missing required one is named in its own spelling', () => {
    const { properties: _p, reconsumeTimes: _r, unitMode: _u, maxReconsumeTimes: _m, batch: _b, brokerName: _n, ...required } = V1;
    assert.deepEqual(Object.keys(decodeSendMessageHeader(createRequestCommand(310, v2Of(required)))).sort(), Object.keys(required).sort());
    const { topic: _t, ...noTopic } = V1;
    assert.throws(() => decodeSendMessageHeader(createRequestCommand(310, v2Of(noTopic))), /the custom field <b> is null/);
    assert.throws(() => decodeSendMessageHeader(createRequestCommand(10, noTopic)), /the custom field <topic> is null/);
    assert.throws(() => decodeSendMessageHeader(createRequestCommand(310, { ...v2Of(V1), e: 'x' })), /the custom field <e> is not a number: x/);
  });
});

describe('V2 header read by its letters', () => {
  /** The decode's value, or the text of what it threw. */
  const outcome = (f: () => unknown): unknown => {
    try {
      return f();
    } catch (e) {
      return `throws ${(e as Error).message}`;
    }
  };

  it('gives what the name-table decode gives, values and errors alike, for every field shape', () => {
    const base: Record<string, string | number | boolean | null> = v2Of(V1);
    const shapes: Array<string | number | boolean | null | undefined> = [undefined, null, '', '7', 7, '-3', ' 12 ', '1e3', 1.5, 'x', true, 'TRUE', 'false', '9007199254740993', 2 ** 31, 'v'];
    let compared = 0;
    for (const letter of Object.keys(SEND_HEADER_V2_KEYS)) {
      for (const shape of shapes) {
        const ext = { ...base };
        if (shape === undefined) delete ext[letter];
        else ext[letter] = shape;
        const request = createRequestCommand(RequestCode.SEND_MESSAGE_V2, ext as Record<string, string | number | boolean>);
        const got = outcome(() => decodeSendMessageHeader(request));
        const want = outcome(() => decodeByNames(request.extFields, V2_KEY_OF));
        assert.deepEqual(got, want, `field ${letter} = ${JSON.stringify(shape)}`);
        compared++;
      }
    }
    assert.equal(compared, 14 * shapes.length);
    // spot checks that the comparison above is not vacuous
    assert.equal(outcome(() => decodeSendMessageHeader(createRequestCommand(310, { ...base, e: 'x' } as Record<string, string>))), 'throws the custom field <e> is not a number: x');
    assert.equal((decodeSendMessageHeader(createRequestCommand(310, { ...base, g: '1700000000999' } as Record<string, string>))).bornTimestamp, 1_700_000_000_999);
  });

  it('a request without extFields names the first required letter', () => {
    const request = createRequestCommand(RequestCode.SEND_MESSAGE_V2, {});
    request.extFields = null;
    assert.throws(() => decodeSendMessageHeader(request), /the custom field <a> is null/);
  });
});

describe('bornHost per channel', () => {
  it('is parsed once per channel and follows a changed remote address', () => {
    const ch = new FakeChannel('10.1.2.3:4567');
    const a = bornHostOfChannel(ch);
    assert.deepEqual(a, socketAddressFromString('10.1.2.3:4567'));
    assert.equal(bornHostOfChannel(ch), a, 'same object the second time');
    const other = new FakeChannel('[::1]:99');
    assert.deepEqual(bornHostOfChannel(other), bornHostOf('[::1]:99'));
    (ch as unknown as { remoteAddress: string }).remoteAddress = '10.9.9.9:1';
    assert.deepEqual(bornHostOfChannel(ch), socketAddressFromString('10.9.9.9:1'));
    assert.deepEqual(bornHostOfChannel(new FakeChannel('garbage')), { ip: Buffer.from([0, 0, 0, 0]), port: 0 });
  });

  it('messages from two connections carry their own bornHost', async () => {
    h = await BrokerHarness.create();
    const one = new FakeChannel('127.0.0.1:40001');
    const two = new FakeChannel('127.0.0.1:40002');
    for (const ch of [one, two, one]) {
      const r = await h.call(RequestCode.SEND_MESSAGE_V2, v2Of({ ...V1, queueId: 0 }), Buffer.from('x'), ch);
      assert.equal(r.code, ResponseCode.SUCCESS);
    }
    assert.deepEqual(h.fake.puts.map((m) => m.bornHost.port), [40001, 40002, 40001]);
  });
});

describe('send reply header', () => {
  it('a stored send answers with exactly msgId, queueId, queueOffset, MSG_REGION, TRACE_ON (JSON and ROCKETMQ bytes)', async () => {
    h = await BrokerHarness.create();
    const r = await h.call(RequestCode.SEND_MESSAGE_V2, v2Of({ ...V1, queueId: 3 }), Buffer.from('x'));
    assert.equal(r.code, ResponseCode.SUCCESS);
    const msgId = createMessageId(socketAddressFromString('127.0.0.1:10911'), 0);
    assert.deepEqual(r.extFields, { msgId, queueId: 3, queueOffset: 0, MSG_REGION: 'DefaultRegion', TRACE_ON: 'true' });
    assert.equal(r.remark, null);
    const json = encodeFrame(r);
    const text = json.subarray(8, 8 + json.readUInt32BE(4)).toString();
    assert.equal(
      text,
      `{"code":0,"extFields":{"msgId":"${msgId}","queueId":"3","queueOffset":"0","MSG_REGION":"DefaultRegion","TRACE_ON":"true"},` +
        `"flag":1,"language":"JAVA","opaque":${r.opaque},"serializeTypeCurrentRPC":"JSON","version":401}`,
    );
    const bin: RemotingCommand = { ...r, serializeTypeCurrentRPC: 1 };
    const frame = encodeFrame(bin);
    const entries = [['msgId', msgId], ['queueId', '3'], ['queueOffset', '0'], ['MSG_REGION', 'DefaultRegion'], ['TRACE_ON', 'true']];
    const ext = Buffer.concat(
      entries.flatMap(([k, v]) => {
        const kl = Buffer.alloc(2);
        kl.writeInt16BE(k!.length);
        const vl = Buffer.alloc(4);
        vl.writeInt32BE(v!.length);
        return [kl, Buffer.from(k!), vl, Buffer.from(v!)];
      }),
    );
    const head = Buffer.alloc(21);
    head.writeInt16BE(0, 0);
    head.writeInt8(0, 2);
    head.writeInt16BE(401, 3);
    head.writeInt32BE(r.opaque, 5);
    head.writeInt32BE(1, 9);
    head.writeInt32BE(0, 13);
    head.writeInt32BE(ext.length, 17);
    const header = Buffer.concat([head, ext]);
    const want = Buffer.alloc(8);
    want.writeInt32BE(4 + header.length, 0);
    want.writeUInt32BE(((1 << 24) | header.length) >>> 0, 4);
    assert.deepEqual(frame, Buffer.concat([want, header]));
  });

  it('a refused send answers with only MSG_REGION and TRACE_ON', async () => {
    h = await BrokerHarness.create({ config: { traceOn: 'false', regionId: 'R1' } });
    const r = await h.call(RequestCode.SEND_MESSAGE_V2, v2Of({ ...V1, topic: 'bad topic!' }), Buffer.from('x'));
    assert.equal(r.code, ResponseCode.MESSAGE_ILLEGAL);
    assert.deepEqual(r.extFields, { MSG_REGION: 'R1', TRACE_ON: 'false' });
  });
});
