/**
 * SEND_REPLY_MESSAGE (324) and SEND_REPLY_MESSAGE_V2 (325): the answer of a request-reply
 * exchange (Java `DefaultMQProducer.request`, Go `Producer.Request`) sent by the responder
 * (mirrors Apache 5.3.3 `ReplyMessageProcessor`).
 *
 * The header is a send header (V1 names for 324, V2 letters for 325) and passes the same checks as
 * a send (`SendMessageProcessor.msgCheck`: broker/topic permission, topic name, body size, topic
 * auto-creation, queue id; a negative queue id picks a random writable queue). Then:
 * 1. push: the requester is the producer connection whose client id is the message's
 *    REPLY_TO_CLIENT property (registered by its HEART_BEAT, ProducerManager.channelOfClient); it
 *    gets PUSH_REPLY_MESSAGE_TO_CLIENT (326) with Apache's ReplyMessageRequestHeader (producerGroup,
 *    topic, defaultTopic, defaultTopicQueueNums, queueId, sysFlag, bornTimestamp, flag,
 *    properties + PUSH_REPLY_TIME, reconsumeTimes, unitMode, bornHost and storeHost as "ip:port",
 *    storeTimestamp) and the body, and must answer SUCCESS within 10 s (Broker2Client.callClient).
 *    Reply: SUCCESS with msgId "0", queueId, queueOffset 0; otherwise 1 SYSTEM_ERROR with Apache's
 *    remark ("reply message properties[REPLY_TO_CLIENT] is null", "push reply message fail,
 *    channel of <id> not found.", "push reply message to <id>fail.").
 * 2. store (storeReplyMessageEnable, default true, as Apache): the message is also stored in its
 *    topic (normally `<cluster>_REPLY_TOPIC`) whether or not the push worked; when stored, the
 *    reply's msgId, queueId and queueOffset are the stored message's (the code stays the push's).
 *    Stored as sent: properties without PUSH_REPLY_TIME and without CLUSTER, as Apache stores
 *    them. Difference: Apache stores the record with sysFlag 0 (it never copies the header's), so
 *    a compressed reply body is stored unreadable; tsmq keeps the header's sysFlag.
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createRequestCommand } from '../../remoting/protocol/commands.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import type { MessageInner } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { decodeProperties, encodeProperties } from '../../common/message/properties.js';
import type { BrokerContext } from '../broker-context.js';
import { mapPutResult } from '../send/put-result-mapping.js';
import { decodeSendMessageHeader, type SendMessageRequestHeader } from './send-message-header.js';
import { bornHostOfChannel, type SendMessageProcessor } from './send-message-processor.js';
import { CALL_CLIENT_TIMEOUT_MS } from './client-connection-processors.js';

/** Outcome of the push to the requester. */
interface PushReplyResult {
  pushOk: boolean;
  remark: string;
}

export class ReplyMessageProcessor {
  constructor(
    private readonly ctx: BrokerContext,
    /** Its checks and reply format are a send's. */
    private readonly send: SendMessageProcessor,
  ) {}

  readonly handler: RequestHandler = (rc) => this.process(rc);

  async process({ channel, request }: RequestContext): Promise<RemotingCommand> {
    const header = decodeSendMessageHeader(request);
    const check = this.send.msgCheck(request, header, channel.remoteAddress);
    if ('response' in check) return check.response;
    const body = request.body ?? Buffer.alloc(0);
    const properties = decodeProperties(header.properties ?? '');
    const msg: MessageInner = {
      topic: header.topic,
      queueId: check.queueId,
      flag: header.flag,
      body,
      properties,
      sysFlag: header.sysFlag,
      bornTimestamp: header.bornTimestamp,
      bornHost: bornHostOfChannel(channel),
      storeHost: this.ctx.storeHost,
      reconsumeTimes: header.reconsumeTimes ?? 0,
      preparedTransactionOffset: 0,
    };
    const push = await this.pushReplyMessage(header, properties, body, channel.remoteAddress);
    const code = push.pushOk ? ResponseCode.SUCCESS : ResponseCode.SYSTEM_ERROR;
    let fields = push.pushOk ? { msgId: '0', queueId: check.queueId, queueOffset: 0 } : undefined;
    if (this.ctx.config.storeReplyMessageEnable) {
      const result = await this.ctx.putMessage(msg, 'send');
      const mapped = mapPutResult(result);
      if (mapped.stored) {
        const a = result.appendResult!;
        fields = { msgId: a.msgId, queueId: check.queueId, queueOffset: a.queueOffset };
      } else {
        this.ctx.logger.warn(`reply message to ${header.topic} not stored: ${mapped.remark ?? mapped.code}`);
      }
    }
    return this.send.reply(request, code, push.pushOk ? null : push.remark, fields);
  }

  /** PUSH_REPLY_MESSAGE_TO_CLIENT (326) to the producer connection named by REPLY_TO_CLIENT. */
  private async pushReplyMessage(header: SendMessageRequestHeader, properties: Map<string, string>, body: Buffer, replierAddress: string): Promise<PushReplyResult> {
    const clientId = properties.get(MessageConst.REPLY_TO_CLIENT);
    if (clientId === undefined) {
      this.ctx.logger.warn(`${MessageConst.REPLY_TO_CLIENT} is null, can not reply message`);
      return { pushOk: false, remark: `reply message properties[${MessageConst.REPLY_TO_CLIENT}] is null` };
    }
    const target = this.ctx.producerManager.channelOfClient(clientId);
    if (!target?.invoke) {
      const remark = `push reply message fail, channel of <${clientId}> not found.`;
      this.ctx.logger.warn(remark);
      return { pushOk: false, remark };
    }
    const pushed = new Map(properties);
    pushed.set(MessageConst.PUSH_REPLY_TIME, String(Date.now()));
    const ext = {
      producerGroup: header.producerGroup,
      topic: header.topic,
      defaultTopic: header.defaultTopic,
      defaultTopicQueueNums: header.defaultTopicQueueNums,
      queueId: header.queueId,
      sysFlag: header.sysFlag,
      bornTimestamp: header.bornTimestamp,
      flag: header.flag,
      properties: encodeProperties(pushed),
      ...(header.reconsumeTimes !== undefined ? { reconsumeTimes: header.reconsumeTimes } : {}),
      unitMode: header.unitMode ?? false,
      bornHost: replierAddress,
      storeHost: this.ctx.brokerAddr,
      storeTimestamp: Date.now(),
    };
    const failed = `push reply message to ${clientId}fail.`;
    try {
      const answer = await target.invoke(createRequestCommand(RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT, ext, body), CALL_CLIENT_TIMEOUT_MS);
      if (answer.code === ResponseCode.SUCCESS) return { pushOk: true, remark: '' };
      this.ctx.logger.warn(`push reply message to <${clientId}> return fail, response remark: ${answer.remark ?? ''}`);
      return { pushOk: false, remark: failed };
    } catch (e) {
      this.ctx.logger.warn(`push reply message to <${clientId}> fail: ${(e as Error).message}`);
      return { pushOk: false, remark: failed };
    }
  }
}
