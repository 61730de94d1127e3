/**
 * SEND_REPLY_MESSAGE (324) / SEND_REPLY_MESSAGE_V2 (325): the reply is pushed to the requester's
 * producer connection (PUSH_REPLY_MESSAGE_TO_CLIENT 326, found by REPLY_TO_CLIENT) and stored in
 * its topic (storeReplyMessageEnable), with Apache 5.3.3 ReplyMessageProcessor's replies and
 * remarks. The Go client's Request/RequestAsync against a real broker: test/interop/go-client.test.ts.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerHarness, FakeChannel } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../../src/remoting/protocol/commands.js';
import { decodeProperties, encodeProperties } from '../../../src/common/message/properties.js';
import { createMessageId, socketAddressOf } from '../../../src/common/message/msgid.js';

const REQUESTER_ID = '127.0.0.1@requester-1';
const REPLY_TOPIC = 'DefaultCluster_REPLY_TOPIC';

/** A client connection that answers broker-initiated requests (as a real requester does). */
class RequesterChannel extends FakeChannel {
  readonly pushed: RemotingCommand[] = [];
  answerCode: number = ResponseCode.SUCCESS;

  invoke(request: RemotingCommand): Promise<RemotingCommand> {
    this.pushed.push(request);
    return Promise.resolve(createResponseCommand(request, this.answerCode, this.answerCode === ResponseCode.SUCCESS ? null : 'nope'));
  }
}

let h: BrokerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function setUp(config: Record<string, string> = {}): Promise<{ requester: RequesterChannel; replier: FakeChannel }> {
  h = await BrokerHarness.create({ config });
  const requester = new RequesterChannel('127.0.0.1:41001');
  const hb = { clientID: REQUESTER_ID, consumerDataSet: [], producerDataSet: [{ groupName: 'PID_REQUESTER' }] };
  const r = await h.call(RequestCode.HEART_BEAT, null, Buffer.from(JSON.stringify(hb)), requester);
  assert.equal(r.code, ResponseCode.SUCCESS);
  return { requester, replier: new FakeChannel('127.0.0.1:42002') };
}

function replyProps(extra: Record<string, string> = {}): string {
  return encodeProperties(new Map(Object.entries({ CORRELATION_ID: 'corr-1', REPLY_TO_CLIENT: REQUESTER_ID, MSG_TYPE: 'reply', TTL: '3', ...extra })));
}

/** SEND_REPLY_MESSAGE_V2 extFields (V2 letters) as the Go/Java replier sends them. */
function v2(props: string, queueId = 0): Record<string, string | number | boolean> {
  return { a: 'PID_REPLIER', b: REPLY_TOPIC, c: 'TBW102', d: 4, e: queueId, f: 0, g: 1_700_000_000_500, h: 0, i: props, j: 0, k: false };
}

describe('ReplyMessageProcessor (SEND_REPLY_MESSAGE 324 / 325)', () => {
  it('pushes the reply to the requester (326, Apache header fields, PUSH_REPLY_TIME) and stores it in the reply topic', async () => {
    const { requester, replier } = await setUp();
    const r = await h!.call(RequestCode.SEND_REPLY_MESSAGE_V2, v2(replyProps()), Buffer.from('the answer'), replier);
    assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    assert.equal(requester.pushed.length, 1);
    const push = requester.pushed[0]!;
    assert.equal(push.code, RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT);
    assert.equal(push.body?.toString(), 'the answer');
    const ext = push.extFields ?? {};
    assert.equal(ext.producerGroup, 'PID_REPLIER');
    assert.equal(ext.topic, REPLY_TOPIC);
    assert.equal(ext.defaultTopic, 'TBW102');
    assert.equal(String(ext.queueId), '0');
    assert.equal(String(ext.bornTimestamp), '1700000000500');
    assert.equal(ext.bornHost, '127.0.0.1:42002', 'the replier\'s address');
    assert.equal(ext.storeHost, '127.0.0.1:10911', 'brokerIP1:listenPort');
    assert.ok(Number(ext.storeTimestamp) > 0);
    const pushedProps = decodeProperties(String(ext.properties));
    assert.equal(pushedProps.get('CORRELATION_ID'), 'corr-1');
    assert.ok(Number(pushedProps.get('PUSH_REPLY_TIME')) > 0, 'PUSH_REPLY_TIME added for the push');

    const stored = h!.fake.puts;
    assert.equal(stored.length, 1);
    assert.equal(stored[0]!.topic, REPLY_TOPIC);
    assert.equal(stored[0]!.body.toString(), 'the answer');
    assert.equal(stored[0]!.properties.get('CORRELATION_ID'), 'corr-1');
    assert.equal(stored[0]!.properties.has('PUSH_REPLY_TIME'), false, 'stored as sent (Apache stores the request\'s property string)');
    assert.equal(stored[0]!.properties.has('CLUSTER'), false, 'no CLUSTER property, unlike a send');
    // the reply names the stored message
    assert.equal(r.extFields!.msgId, createMessageId(socketAddressOf('127.0.0.1', 10911), stored[0]!.commitLogOffset));
    assert.equal(String(r.extFields!.queueId), '0');
    assert.equal(String(r.extFields!.queueOffset), String(stored[0]!.queueOffset));
    assert.equal(r.extFields!.MSG_REGION, 'DefaultRegion');
  });

  it('V1 header names (324) work the same', async () => {
    const { requester, replier } = await setUp();
    const ext = { producerGroup: 'PID_REPLIER', topic: REPLY_TOPIC, defaultTopic: 'TBW102', defaultTopicQueueNums: 4, queueId: 0, sysFlag: 0, bornTimestamp: 1, flag: 0, properties: replyProps() };
    const r = await h!.call(RequestCode.SEND_REPLY_MESSAGE, ext, Buffer.from('v1'), replier);
    assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    assert.equal(requester.pushed[0]?.body?.toString(), 'v1');
  });

  it('no REPLY_TO_CLIENT, an unknown client, or a refused push: SYSTEM_ERROR with Apache\'s remark, the reply is stored anyway', async () => {
    const { requester, replier } = await setUp();
    const noTarget = encodeProperties(new Map([['CORRELATION_ID', 'c'], ['MSG_TYPE', 'reply']]));
    let r = await h!.call(RequestCode.SEND_REPLY_MESSAGE_V2, v2(noTarget), Buffer.from('a'), replier);
    assert.equal(r.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(r.remark, 'reply message properties[REPLY_TO_CLIENT] is null');
    r = await h!.call(RequestCode.SEND_REPLY_MESSAGE_V2, v2(replyProps({ REPLY_TO_CLIENT: '127.0.0.1@gone' })), Buffer.from('b'), replier);
    assert.equal(r.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(r.remark, 'push reply message fail, channel of <127.0.0.1@gone> not found.');
    requester.answerCode = ResponseCode.SYSTEM_ERROR;
    r = await h!.call(RequestCode.SEND_REPLY_MESSAGE_V2, v2(replyProps()), Buffer.from('c'), replier);
    assert.equal(r.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(r.remark, `push reply message to ${REQUESTER_ID}fail.`);
    assert.deepEqual(h!.fake.puts.map((m) => m.body.toString()), ['a', 'b', 'c'], 'storeReplyMessageEnable stores every reply');
    assert.ok(r.extFields!.msgId && r.extFields!.msgId !== '0', 'the error reply still names the stored message');
    requester.close();
    r = await h!.call(RequestCode.SEND_REPLY_MESSAGE_V2, v2(replyProps()), Buffer.from('d'), replier);
    assert.equal(r.remark, `push reply message fail, channel of <${REQUESTER_ID}> not found.`, 'a closed connection is no target');
  });

  it('storeReplyMessageEnable=false: pushed only; the reply says msgId "0", queueOffset 0', async () => {
    const { requester, replier } = await setUp({ storeReplyMessageEnable: 'false' });
    const r = await h!.call(RequestCode.SEND_REPLY_MESSAGE_V2, v2(replyProps(), 0), Buffer.from('x'), replier);
    assert.equal(r.code, ResponseCode.SUCCESS);
    assert.equal(r.extFields!.msgId, '0');
    assert.equal(String(r.extFields!.queueOffset), '0');
    assert.equal(requester.pushed.length, 1);
    assert.equal(h!.fake.puts.length, 0);
  });

  it('the send checks apply: an illegal topic is refused before anything is pushed or stored', async () => {
    const { requester, replier } = await setUp();
    const r = await h!.call(RequestCode.SEND_REPLY_MESSAGE_V2, { ...v2(replyProps()), b: 'bad topic!' }, Buffer.from('x'), replier);
    assert.equal(r.code, ResponseCode.MESSAGE_ILLEGAL);
    assert.equal(requester.pushed.length, 0);
    assert.equal(h!.fake.puts.length, 0);
  });
});
