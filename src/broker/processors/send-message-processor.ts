/**
 * SEND_MESSAGE (10), SEND_MESSAGE_V2 (310) and SEND_BATCH_MESSAGE (320)
 * (mirrors 4.9 `SendMessageProcessor.sendMessage` / `sendBatchMessage` and `msgCheck`).
 *
 * Checks, in order, all before anything is written:
 *   broker permission without WRITE → 16 NO_PERMISSION;
 *   topic blank / illegal characters / too long (127, 255 for %RETRY%) → 13 MESSAGE_ILLEGAL;
 *   system topics that take no sends (SCHEDULE_TOPIC_XXXX, …) → 16;
 *   body larger than maxMessageSize → 13;
 *   unknown topic → auto-created from the default topic (TBW102) or, for %RETRY%, created with
 *     1 queue; else 17 TOPIC_NOT_EXIST;
 *   queueId ≥ max(read, write queues) → 1 SYSTEM_ERROR (negative → random writable queue);
 *   sysFlag transaction type PREPARED/ROLLBACK without TRAN_MSG "true" (single send), or any
 *     transaction type on a batch → 13 MESSAGE_ILLEGAL (transactionTypeProblem below);
 *   sysFlag COMPRESSED with a body (or batch item body) that does not start like its compression
 *     type, or an unknown type → 13 (common/message/compressed-body.ts; Apache stores it);
 *   topic perm without WRITE → 16;
 *   %RETRY% topic with reconsumeTimes ≥ max (header l, else the group's retryMaxTimes) → stored
 *     in %DLQ%<group> instead;
 *   transactional half messages (TRAN_MSG "true" in any case: Boolean.parseBoolean) → stored as half messages in RMQ_SYS_TRANS_HALF_TOPIC
 *     by the TransactionalMessageService (16 when rejectTransactionMessage or no service).
 * The stored message: properties from header i, bornHost = the peer address, storeHost =
 * brokerIP1:listenPort, sysFlag as sent (compressed bodies stay compressed), reconsumeTimes from
 * j, CLUSTER property added; DELAY > 0 is rewritten to SCHEDULE_TOPIC_XXXX by the put hook.
 * Reply extFields: msgId (offset msgId), queueId, queueOffset, MSG_REGION, TRACE_ON.
 */
import type { RemotingChannel, RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import type { MessageInner, SocketAddress } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { getTransactionValue, MessageSysFlag } from '../../common/message/sysflag.js';
import { decodeProperties } from '../../common/message/properties.js';
import { socketAddressFromString } from '../../common/message/msgid.js';
import { BatchPropertyCompletion, decodeBatchBody, type BatchItem } from '../../common/message/batch-codec.js';
import { scanEncodedBatch, type EncodedBatch } from '../../common/message/encoded-batch.js';
import { recallHandleOf } from '../timer/recall-handle.js';
import { compressedBodyProblem } from '../../common/message/compressed-body.js';
import { dlqTopicOf, isNotAllowedSendTopic, isRetryTopic, TopicValidator, validateTopic } from '../../common/message/topic-validator.js';
import { PermName } from '../broker-config.js';
import type { BrokerContext } from '../broker-context.js';
import type { TopicConfig } from '../topic/topic-config.js';
import type { PutMessageResult } from '../../store/message-store.js';
import { mapPutResult } from '../send/put-result-mapping.js';
import { decodeSendMessageHeader, type SendMessageRequestHeader } from './send-message-header.js';
import type { TransactionalMessageService } from '../transaction/transactional-message-service.js';
import { isTransactionPrepared } from '../transaction/half-message.js';

/** DLQ topics have one queue (Apache `DLQ_NUMS_PER_GROUP`). */
export const DLQ_NUMS_PER_GROUP = 1;
const RW = PermName.PERM_READ | PermName.PERM_WRITE;
const NO_PROPERTIES = new Map<string, string>();

/** The peer's address as a SocketAddress; 0.0.0.0:0 when it cannot be parsed. */
export function bornHostOf(remoteAddress: string): SocketAddress {
  try {
    return socketAddressFromString(remoteAddress);
  } catch {
    return { ip: Buffer.from([0, 0, 0, 0]), port: 0 };
  }
}

/** bornHost per connection: the peer address is parsed once, not once per message. */
const bornHostByChannel = new WeakMap<RemotingChannel, { remoteAddress: string; host: SocketAddress }>();

/** bornHostOf(channel.remoteAddress), cached per channel (the stored SocketAddress is shared, never mutated). */
export function bornHostOfChannel(channel: RemotingChannel): SocketAddress {
  const cached = bornHostByChannel.get(channel);
  if (cached && cached.remoteAddress === channel.remoteAddress) return cached.host;
  const host = bornHostOf(channel.remoteAddress);
  bornHostByChannel.set(channel, { remoteAddress: channel.remoteAddress, host });
  return host;
}

/** What a stored send answers with, ahead of MSG_REGION and TRACE_ON. */
export interface SendReplyFields {
  msgId: string;
  queueId: number;
  queueOffset: number;
  /** UNIQ_KEY of a single send (Apache SendMessageResponseHeader.transactionId). */
  transactionId?: string;
  /** Timer messages of single sends (Apache `attachRecallHandle`). */
  recallHandle?: string;
}

/** msgCheck's outcome: the error reply, or the topic's config and the queue to write. */
export type SendCheck = { response: RemotingCommand } | { topicConfig: TopicConfig; queueId: number };

export class SendMessageProcessor {
  constructor(
    private readonly ctx: BrokerContext,
    private readonly transactions: TransactionalMessageService | null = null,
  ) {}

  readonly handler: RequestHandler = (rc) => this.process(rc);

  /**
   * Answers a send. The usual single send's put is told through BrokerContext
   * .putMessageWithCallback (no promise per step) and answered through the dispatch's responder
   * (RequestContext.respond: returns null, no promise at all) or, when called without one, through
   * one promise; checks that refuse answer at once; a batch or a transactional half message
   * answers through its own async path.
   */
  process(rc: RequestContext): Promise<RemotingCommand> | RemotingCommand | null {
    const { channel, request } = rc;
    const header = decodeSendMessageHeader(request);
    const check = this.msgCheck(request, header, channel.remoteAddress);
    if ('response' in check) return check.response;
    const batch = request.code === RequestCode.SEND_BATCH_MESSAGE || header.batch === true;
    // a single send's properties are decoded once, here, for the transaction check and the message
    const propertiesText = header.properties ?? '';
    const properties = batch ? null : decodeProperties(propertiesText);
    const tranProblem = transactionTypeProblem(header.sysFlag, properties);
    if (tranProblem) return this.reply(request, ResponseCode.MESSAGE_ILLEGAL, tranProblem);
    if (batch) return this.sendBatch(request, header, check.topicConfig, check.queueId, channel);
    const bodyProblem = compressedBodyProblem(header.sysFlag, request.body ?? Buffer.alloc(0));
    if (bodyProblem) return this.reply(request, ResponseCode.MESSAGE_ILLEGAL, bodyProblem);
    const msg: MessageInner = {
      topic: header.topic,
      queueId: check.queueId,
      flag: header.flag,
      body: request.body ?? Buffer.alloc(0),
      properties: properties!,
      sysFlag: this.sysFlagFor(header, check.topicConfig),
      bornTimestamp: header.bornTimestamp,
      bornHost: bornHostOfChannel(channel),
      storeHost: this.ctx.storeHost,
      reconsumeTimes: header.reconsumeTimes ?? 0,
      preparedTransactionOffset: 0,
      encodedProperties: undefined,
      encodedPropertiesTail: undefined,
    };
    const retry = this.handleRetryAndDlq(request, header, msg);
    if (retry) return retry;
    this.addClusterProperty(msg, propertiesText);
    if (isTransactionPrepared(msg)) return this.sendHalf(request, header, msg);
    const queueIdForReply = msg.queueId;
    const respond = rc.respond;
    if (respond !== undefined) {
      // answered through the dispatch's responder: no promise at all
      this.putAndAnswer(request, msg, queueIdForReply, (response) => respond.answer(response), (e) => respond.fail(e));
      return null;
    }
    return new Promise<RemotingCommand>((resolve, reject) => this.putAndAnswer(request, msg, queueIdForReply, resolve, reject));
  }

  /** Puts `msg` and hands its reply (storedReply) to `answer`, or what went wrong to `fail`; each called at most once. */
  private putAndAnswer(request: RemotingCommand, msg: MessageInner, queueIdForReply: number, answer: (response: RemotingCommand) => void, fail: (e: unknown) => void): void {
    this.ctx.putMessageWithCallback(
      msg,
      'send',
      (result) => {
        let response: RemotingCommand;
        try {
          response = this.storedReply(request, msg, queueIdForReply, result);
        } catch (e) {
          fail(e);
          return;
        }
        answer(response);
      },
      fail,
    );
  }

  /**
   * Sets the CLUSTER property (Apache adds it to every sent message) and, when the client's
   * properties text is what the stored record would hold anyway (its decoded Map encodes back to
   * it, with or without the last separator the Java client leaves out), gives the record encoder
   * that text plus the CLUSTER entry (MessageInner.encodedProperties / encodedPropertiesTail): the
   * same stored bytes without serialising the Map again. The put hooks reset it when they change
   * the properties.
   */
  private addClusterProperty(msg: MessageInner, propertiesText: string): void {
    const clusterName = this.ctx.config.brokerClusterName;
    let completion = this.clusterCompletion;
    if (completion === null || this.clusterCompletionName !== clusterName) {
      completion = new BatchPropertyCompletion(new Map(), MessageConst.CLUSTER, clusterName);
      this.clusterCompletion = completion;
      this.clusterCompletionName = clusterName;
    }
    const item = this.propertiesItem;
    item.properties = msg.properties;
    item.propertiesText = propertiesText;
    msg.encodedProperties = completion.complete(item);
    msg.encodedPropertiesTail = completion.tail;
    item.properties = NO_PROPERTIES;
    item.propertiesText = '';
  }

  /** The last topic name that passed validateTopic and isNotAllowedSendTopic (pure checks of the name). */
  private lastSendableTopic: string | null = null;
  private clusterCompletion: BatchPropertyCompletion | null = null;
  private clusterCompletionName = '';
  /** What addClusterProperty hands to BatchPropertyCompletion (reused: one synchronous use at a time). */
  private readonly propertiesItem: BatchItem = { flag: 0, body: Buffer.alloc(0), properties: new Map(), propertiesText: '' };

  /** A stored single send's answer (msgId, queueId, queueOffset, transactionId, recallHandle, MSG_REGION, TRACE_ON), or the put's refusal. */
  private storedReply(request: RemotingCommand, msg: MessageInner, queueIdForReply: number, result: PutMessageResult): RemotingCommand {
    const mapped = mapPutResult(result);
    if (!mapped.stored) return this.reply(request, mapped.code, mapped.remark);
    const a = result.appendResult!;
    const recallHandle = recallHandleOf(msg, this.ctx.config.brokerName);
    const transactionId = msg.properties.get(MessageConst.UNIQ_KEY);
    if (transactionId && !recallHandle) {
      // the usual answer, built in one object (the same keys and order as `reply` gives)
      const cfg = this.ctx.config;
      const ext = { msgId: a.msgId, queueId: queueIdForReply, queueOffset: a.queueOffset, transactionId, MSG_REGION: cfg.regionId, TRACE_ON: cfg.traceOn ? 'true' : 'false' };
      return createResponseCommand(request, mapped.code, mapped.remark, ext);
    }
    return this.reply(request, mapped.code, mapped.remark, { msgId: a.msgId, queueId: queueIdForReply, queueOffset: a.queueOffset, ...transactionIdOf(msg), ...(recallHandle ? { recallHandle } : {}) });
  }

  /** A transactional half message (TRAN_MSG "true"): stored by the TransactionalMessageService. */
  private async sendHalf(request: RemotingCommand, header: SendMessageRequestHeader, msg: MessageInner): Promise<RemotingCommand> {
    msg.encodedProperties = undefined; // PGROUP may be added; the half message's properties are its own
    msg.encodedPropertiesTail = undefined;
    if (this.ctx.config.rejectTransactionMessage || !this.transactions) {
      const why = this.ctx.config.rejectTransactionMessage ? 'is forbidden' : 'is not supported';
      return this.reply(request, ResponseCode.NO_PERMISSION, `the broker[${this.ctx.config.brokerName}] sending transaction message ${why}`);
    }
    // ali-ons never sets PGROUP; the check-back (code 39) needs the producer group.
    if (!msg.properties.has(MessageConst.PGROUP)) msg.properties.set(MessageConst.PGROUP, header.producerGroup);
    const queueIdForHalf = msg.queueId;
    const { result } = await this.transactions.prepare(msg);
    const mappedHalf = mapPutResult(result);
    if (!mappedHalf.stored) return this.reply(request, mappedHalf.code, mappedHalf.remark);
    const h = result.appendResult!;
    return this.reply(request, mappedHalf.code, mappedHalf.remark, { msgId: h.msgId, queueId: queueIdForHalf, queueOffset: h.queueOffset, ...transactionIdOf(msg) });
  }

  /**
   * Apache `msgCheck` plus the topic-length / body-size pre-checks of 5.x HookUtils (the limit
   * applies to the body as received). Also the checks of a reply message (ReplyMessageProcessor).
   */
  msgCheck(request: RemotingCommand, header: SendMessageRequestHeader, remote: string): SendCheck {
    const cfg = this.ctx.config;
    const topic = header.topic;
    if (!PermName.isWriteable(cfg.brokerPermission)) {
      return { response: this.reply(request, ResponseCode.NO_PERMISSION, `the broker[${cfg.brokerIP1}] sending message is forbidden`) };
    }
    if (topic !== this.lastSendableTopic) {
      // both checks depend on the name only: a producer's next send to the same topic skips them
      const problem = validateTopic(topic);
      if (problem) return { response: this.reply(request, ResponseCode.MESSAGE_ILLEGAL, `illegal topic: ${problem}`) };
      if (isNotAllowedSendTopic(topic)) {
        return { response: this.reply(request, ResponseCode.NO_PERMISSION, `Sending message to topic[${topic}] is forbidden.`) };
      }
      this.lastSendableTopic = topic;
    }
    const bodyLength = request.body?.length ?? 0;
    if (bodyLength > cfg.maxMessageSize) {
      return {
        response: this.reply(request, ResponseCode.MESSAGE_ILLEGAL, oversizedBodyRemark(bodyLength, cfg.maxMessageSize, header.sysFlag)),
      };
    }
    const tcm = this.ctx.topicConfigManager;
    let tc = tcm.selectTopicConfig(topic);
    if (!tc) {
      tc = tcm.createTopicInSendMessageMethod(topic, header.defaultTopic, header.defaultTopicQueueNums, 0);
      if (!tc && isRetryTopic(topic)) tc = tcm.createTopicInSendMessageBackMethod(topic, 1, RW, 0);
    }
    if (!tc) {
      return { response: this.reply(request, ResponseCode.TOPIC_NOT_EXIST, `topic[${topic}] not exist, apply first please!`) };
    }
    const idValid = Math.max(tc.writeQueueNums, tc.readQueueNums);
    if (header.queueId >= idValid) {
      return {
        response: this.reply(
          request,
          ResponseCode.SYSTEM_ERROR,
          `request queueId[${header.queueId}] is illegal, topic ${topic} has ${tc.writeQueueNums} write / ${tc.readQueueNums} read queues, Producer: ${remote}`,
        ),
      };
    }
    if (!PermName.isWriteable(tc.perm)) {
      return { response: this.reply(request, ResponseCode.NO_PERMISSION, `the topic[${topic}] sending message is forbidden`) };
    }
    const queueId = header.queueId < 0 ? this.ctx.randomInt(tc.writeQueueNums) : header.queueId;
    return { topicConfig: tc, queueId };
  }

  private sysFlagFor(header: SendMessageRequestHeader, tc: TopicConfig): number {
    let sysFlag = header.sysFlag;
    if (tc.topicFilterType === 'MULTI_TAG') sysFlag |= MessageSysFlag.MULTI_TAGS_FLAG;
    return sysFlag;
  }

  /** Apache `handleRetryAndDLQ`: a %RETRY% send past its max goes to %DLQ%<group>. Returns an error reply or null. */
  private handleRetryAndDlq(request: RemotingCommand, header: SendMessageRequestHeader, msg: MessageInner): RemotingCommand | null {
    if (!isRetryTopic(header.topic)) return null;
    const group = header.topic.slice(TopicValidator.RETRY_GROUP_TOPIC_PREFIX.length);
    const sgc = this.ctx.subscriptionGroupManager.findSubscriptionGroupConfig(group);
    if (!sgc) return this.reply(request, ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `subscription group not exist, ${group}`);
    const maxReconsumeTimes = header.maxReconsumeTimes ?? sgc.retryMaxTimes;
    const reconsumeTimes = header.reconsumeTimes ?? 0;
    if (reconsumeTimes < maxReconsumeTimes) return null;
    const dlq = dlqTopicOf(group);
    this.ctx.topicConfigManager.createTopicInSendMessageBackMethod(dlq, DLQ_NUMS_PER_GROUP, RW, 0);
    msg.topic = dlq;
    msg.queueId = this.ctx.randomInt(DLQ_NUMS_PER_GROUP);
    msg.properties.delete(MessageConst.DELAY);
    return null;
  }

  /**
   * SEND_BATCH_MESSAGE (Apache `sendBatchMessage`): the items are stored in the chosen queue as
   * one atomic block (MessageStore.putMessages): consecutive queue offsets and CommitLog
   * positions, one store time, all or none. Each item keeps its own properties, completed by the
   * header's (the batch's) properties, plus CLUSTER. Reply: comma-joined offset msgIds, queueId,
   * queueOffset of the first item.
   */
  private async sendBatch(request: RemotingCommand, header: SendMessageRequestHeader, tc: TopicConfig, queueId: number, channel: RemotingChannel): Promise<RemotingCommand> {
    if (isRetryTopic(header.topic)) return this.reply(request, ResponseCode.MESSAGE_ILLEGAL, 'batch request does not support retry group');
    const encoded = this.encodedBatchOf(request, header, tc, queueId, channel);
    if (encoded !== null) {
      const result = await this.ctx.putEncodedBatch(encoded);
      const mapped = mapPutResult(result);
      if (!mapped.stored) return this.reply(request, mapped.code, mapped.remark);
      const a = result.appendResult!;
      return this.reply(request, mapped.code, mapped.remark, { msgId: a.msgId, queueId, queueOffset: a.queueOffset });
    }
    let items;
    try {
      // views into the request frame: the items are appended to the CommitLog before the reply
      items = decodeBatchBody(request.body ?? Buffer.alloc(0), { copyBodies: false });
    } catch (e) {
      return this.reply(request, ResponseCode.MESSAGE_ILLEGAL, (e as Error).message);
    }
    if (items.length === 0) return this.reply(request, ResponseCode.MESSAGE_ILLEGAL, 'batch body holds no message');
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      if (item.body.length > this.ctx.config.maxMessageSize) {
        return this.reply(request, ResponseCode.MESSAGE_ILLEGAL, `batch item ${i}: body size ${item.body.length} exceeds maxMessageSize ${this.ctx.config.maxMessageSize}`);
      }
      if ((Number(item.properties.get(MessageConst.DELAY)) || 0) > 0) {
        return this.reply(request, ResponseCode.MESSAGE_ILLEGAL, `batch item ${i}: a batch message may not carry a delay level`);
      }
      const bodyProblem = compressedBodyProblem(header.sysFlag, item.body);
      if (bodyProblem) return this.reply(request, ResponseCode.MESSAGE_ILLEGAL, `batch item ${i}: ${bodyProblem}`);
    }
    const batchProps = decodeProperties(header.properties ?? '');
    const sysFlag = this.sysFlagFor(header, tc);
    const bornHost = bornHostOfChannel(channel);
    const storeHost = this.ctx.storeHost;
    const completion = new BatchPropertyCompletion(batchProps, MessageConst.CLUSTER, this.ctx.config.brokerClusterName);
    const msgs: MessageInner[] = new Array<MessageInner>(items.length);
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      // item.properties is a fresh Map per item (decodeBatchBody), completed in place
      const encodedProperties = completion.complete(item);
      const encodedPropertiesTail = completion.tail;
      msgs[i] = {
        topic: header.topic,
        queueId,
        flag: item.flag,
        body: item.body,
        properties: item.properties,
        sysFlag,
        bornTimestamp: header.bornTimestamp,
        bornHost,
        storeHost,
        reconsumeTimes: 0,
        preparedTransactionOffset: 0,
        encodedProperties,
        encodedPropertiesTail,
      };
    }
    const result = await this.ctx.putMessages(msgs);
    const mapped = mapPutResult(result);
    if (!mapped.stored) return this.reply(request, mapped.code, mapped.remark);
    const a = result.appendResult!;
    return this.reply(request, mapped.code, mapped.remark, { msgId: a.msgId, queueId, queueOffset: a.queueOffset });
  }

  /**
   * The batch on the byte path (common/message/encoded-batch.ts: records written straight from
   * the request frame, the same stored bytes), or null when the general path must take it: the
   * store has no byte path, the body is compressed, an item is too large or unusual (a timer or
   * delay property, a malformed or non-canonical properties text: scanEncodedBatch), or the
   * topic is SCHEDULE_TOPIC_XXXX. What it refuses, the general path refuses with its own remark.
   */
  private encodedBatchOf(request: RemotingCommand, header: SendMessageRequestHeader, tc: TopicConfig, queueId: number, channel: RemotingChannel): EncodedBatch | null {
    if (!this.ctx.putsEncodedBatches || (header.sysFlag & MessageSysFlag.COMPRESSED_FLAG) !== 0 || header.topic === TopicValidator.RMQ_SYS_SCHEDULE_TOPIC) return null;
    const body = request.body;
    if (!body || body.length === 0) return null;
    const batch = scanEncodedBatch(body, header.properties ?? '', MessageConst.CLUSTER, this.ctx.config.brokerClusterName);
    if (batch === null || batch.maxBodyLen > this.ctx.config.maxMessageSize) return null;
    batch.topic = header.topic;
    batch.queueId = queueId;
    batch.sysFlag = this.sysFlagFor(header, tc);
    batch.bornTimestamp = header.bornTimestamp;
    batch.bornHost = bornHostOfChannel(channel);
    batch.storeHost = this.ctx.storeHost;
    return batch;
  }

  /** A send's response: `ext` (msgId, queueId, queueOffset, …) when stored, then MSG_REGION and TRACE_ON. */
  reply(request: RemotingCommand, code: number, remark?: string | null, ext?: SendReplyFields): RemotingCommand {
    const cfg = this.ctx.config;
    const extFields: Record<string, string | number> = ext
      ? {
          msgId: ext.msgId,
          queueId: ext.queueId,
          queueOffset: ext.queueOffset,
          ...(ext.transactionId ? { transactionId: ext.transactionId } : {}),
          ...(ext.recallHandle ? { recallHandle: ext.recallHandle } : {}),
          MSG_REGION: cfg.regionId,
          TRACE_ON: cfg.traceOn ? 'true' : 'false',
        }
      : { MSG_REGION: cfg.regionId, TRACE_ON: cfg.traceOn ? 'true' : 'false' };
    return createResponseCommand(request, code, remark ?? null, extFields);
  }
}

/**
 * Why the transaction type bits (sysFlag & 0xC) of a send cannot be stored as given, or null.
 *
 * A record whose type is PREPARED (0x4) or ROLLBACK (0xC) is never put into a ConsumeQueue
 * (Apache's dispatcher skips both), so a plain send carrying those bits would be acknowledged
 * (SEND_OK, queueOffset 0) and then never delivered. Apache 5.3.3 stores such a message exactly
 * like that; tsmq refuses it instead (pinned in test/robustness/send-sysflag.test.ts). A real
 * transactional producer sets PREPARED together with TRAN_MSG=true, which takes the half-message
 * path and is unaffected. COMMIT (0x8) is dispatched normally and accepted. A batch refuses every
 * transaction type, as Apache's CommitLog does for `putMessages` (MESSAGE_ILLEGAL).
 * `properties`: the single send's decoded properties; null for a batch.
 */
export function transactionTypeProblem(sysFlag: number, properties: Map<string, string> | null): string | null {
  const type = getTransactionValue(sysFlag);
  if (type === MessageSysFlag.TRANSACTION_NOT_TYPE) return null;
  const hex = `0x${(sysFlag >>> 0).toString(16)}`;
  if (properties === null) return `batch sysFlag ${hex} carries a transaction type; a batch cannot be transactional`;
  if (type === MessageSysFlag.TRANSACTION_COMMIT_TYPE) return null;
  if (isTransactionPrepared({ properties })) return null;
  const name = type === MessageSysFlag.TRANSACTION_PREPARED_TYPE ? 'PREPARED' : 'ROLLBACK';
  return `sysFlag ${hex} marks a transaction ${name} message but property ${MessageConst.TRAN_MSG} is not "true"; such a message would be stored and never delivered`;
}

/**
 * Remark for a body over maxMessageSize. The size is that of the body as received: clients
 * compress large bodies (sysFlag COMPRESSED_FLAG; ali-ons above 4 KiB), and incompressible data
 * grows, so the number can exceed what the application sent.
 */
export function oversizedBodyRemark(bodyLength: number, maxMessageSize: number, sysFlag: number): string {
  const what = (sysFlag & MessageSysFlag.COMPRESSED_FLAG) !== 0 ? 'the body as received, compressed by the client' : 'the body as received';
  return `message body size ${bodyLength} exceeds maxMessageSize ${maxMessageSize} (${what})`;
}

/**
 * The reply's `transactionId`: the message's UNIQ_KEY, as Apache's handlePutMessageResult sets it
 * for every single send (the client's TransactionSendResult.getTransactionId and the
 * END_TRANSACTION transactionId come from it); absent when the message has none.
 */
function transactionIdOf(msg: MessageInner): { transactionId?: string } {
  const uniq = msg.properties.get(MessageConst.UNIQ_KEY);
  return uniq ? { transactionId: uniq } : {};
}
