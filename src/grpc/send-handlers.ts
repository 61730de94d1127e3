/**
 * SendMessage and EndTransaction (spec B3, B5).
 *
 * First every message's topic is checked (resource-validator.ts): an illegal name or a system topic
 * (SCHEDULE_TOPIC_XXXX, RMQ_SYS_TRANS_HALF_TOPIC, …) refuses the whole request with ILLEGAL_TOPIC
 * and no entries, before anything is stored (Apache's proxy answers the same).
 * Per message: validation (message-converter.ts), topic lookup / auto-creation, write permission,
 * queue = system_properties.queue_id when valid (the 1.0.8 client always sends 0), else a message
 * group hash (FIFO) or a random writable queue. Then by type:
 *   NORMAL / FIFO   the broker put path
 *   DELAY           the broker put path with TIMER_DELIVER_MS: its timer put hook files the message
 *                   in the durable timer wheel (src/broker/timer; a time already passed is stored
 *                   directly) and the entry carries the recall handle
 *   TRANSACTION     a half message via TransactionalMessageService; transaction_id returned
 * Entry: {status, message_id (the client's id = UNIQ_KEY), transaction_id, offset (queue offset)}.
 *
 * Several messages for one topic that all pass validation and are all NORMAL, or all FIFO of one
 * message group, are one batch (the Apache proxy turns such a request into one
 * SEND_BATCH_MESSAGE): one queue for all (chosen as for the first message), one atomic append
 * (consecutive queue offsets and CommitLog positions, one store time), all stored or none. Unlike
 * the proxy, which answers a batch with one entry, there is one entry per message (offset = its
 * own queue offset), as for any other multi-message request. Other multi-message requests (mixed
 * topics, kinds or groups, an invalid message) are stored message by message.
 *
 * Put statuses map to v2 codes as the Apache proxy does (flush/replica timeouts → *_PERSISTENCE_TIMEOUT,
 * page cache busy → TOO_MANY_REQUESTS so producers back off and retry).
 */
import type * as grpc from '@grpc/grpc-js';
import { javaStringHashCode } from '../common/message/java-hash.js';
import { PermName } from '../broker/broker-config.js';
import type { PutMessageResult, PutMessageStatus } from '../store/message-store.js';
import { decodeTransactionId } from '../broker/transaction/transactional-message-service.js';
import { recallHandleOf } from '../broker/timer/recall-handle.js';
import { ResponseCode } from '../remoting/codes/response-code.js';
import { clientIdOf, peerAddress, unary, type GrpcServices, type StatusOnly } from './grpc-services.js';
import { fromProtoMessage, isInboundError, type Inbound } from './message-converter.js';
import { findTopic, isStatus } from './route-handlers.js';
import { checkTopicName } from './resource-validator.js';
import { Code, OK_STATUS, status, type CodeName, type Message, type Resource, type Status } from './proto/v2-types.js';
import { messageTypeRefusal } from './topic-message-type.js';

interface SendResultEntry {
  status: Status;
  message_id: string;
  transaction_id: string;
  offset: number;
  recall_handle: string;
}

const PUT_CODE: Record<PutMessageStatus, CodeName> = {
  PUT_OK: Code.OK,
  FLUSH_DISK_TIMEOUT: Code.MASTER_PERSISTENCE_TIMEOUT,
  FLUSH_SLAVE_TIMEOUT: Code.SLAVE_PERSISTENCE_TIMEOUT,
  SLAVE_NOT_AVAILABLE: Code.HA_NOT_AVAILABLE,
  SERVICE_NOT_AVAILABLE: Code.INTERNAL_SERVER_ERROR,
  CREATE_MAPPED_FILE_FAILED: Code.INTERNAL_SERVER_ERROR,
  MESSAGE_ILLEGAL: Code.BAD_REQUEST,
  PROPERTIES_SIZE_EXCEEDED: Code.MESSAGE_PROPERTIES_TOO_LARGE,
  OS_PAGE_CACHE_BUSY: Code.TOO_MANY_REQUESTS,
  UNKNOWN_ERROR: Code.INTERNAL_SERVER_ERROR,
  WHEEL_TIMER_FLOW_CONTROL: Code.INTERNAL_SERVER_ERROR,
  WHEEL_TIMER_MSG_ILLEGAL: Code.ILLEGAL_DELIVERY_TIME,
  WHEEL_TIMER_NOT_ENABLE: Code.INTERNAL_SERVER_ERROR,
};

function entryOf(r: PutMessageResult, messageId: string, transactionId = '', recallHandle = ''): SendResultEntry {
  const code = PUT_CODE[r.status] ?? Code.INTERNAL_SERVER_ERROR;
  return {
    status: code === Code.OK ? OK_STATUS : status(code, r.remark ?? r.status),
    message_id: messageId,
    transaction_id: transactionId,
    offset: r.appendResult?.queueOffset ?? 0,
    recall_handle: code === Code.OK ? recallHandle : '',
  };
}

function failed(code: CodeName, message: string, messageId = ''): SendResultEntry {
  return { status: status(code, message), message_id: messageId, transaction_id: '', offset: 0, recall_handle: '' };
}

async function sendOne(s: GrpcServices, m: Message, peer: string): Promise<SendResultEntry> {
  const now = s.ctx.clock.nowMs();
  const parsed = fromProtoMessage(m, { bornHost: peerAddress(peer), storeHost: s.ctx.storeHost, nowMs: now, maxBodySizeBytes: Math.min(s.config.grpcMaxBodySizeBytes, s.ctx.config.maxMessageSize) });
  if (isInboundError(parsed)) return failed(parsed.code, parsed.message, m.system_properties?.message_id ?? '');
  const tc = findTopic(s, parsed.msg.topic, true);
  if (isStatus(tc)) return failed(tc.code as CodeName, tc.message, parsed.uniqKey);
  if (!PermName.isWriteable(tc.perm) || !PermName.isWriteable(s.ctx.config.brokerPermission) || tc.writeQueueNums <= 0) {
    return failed(Code.FORBIDDEN, `topic ${tc.topicName} is not writable`, parsed.uniqKey);
  }
  const wrongType = messageTypeRefusal(tc, parsed.kind);
  if (wrongType) return failed(Code.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE, wrongType, parsed.uniqKey);
  parsed.msg.queueId = chooseQueue(s, parsed, tc.writeQueueNums);
  return await store(s, parsed);
}

function chooseQueue(s: GrpcServices, p: Inbound, writeQueueNums: number): number {
  const asked = p.msg.queueId;
  if (Number.isInteger(asked) && asked >= 0 && asked < writeQueueNums) return asked;
  const group = p.msg.properties.get('__SHARDINGKEY');
  if (group !== undefined) return Math.abs(javaStringHashCode(group) % writeQueueNums);
  return s.ctx.randomInt(writeQueueNums);
}

async function store(s: GrpcServices, p: Inbound): Promise<SendResultEntry> {
  const topic = p.msg.topic;
  if (p.kind === 'TRANSACTION') {
    const { result, transactionId } = await s.transactions.prepare(p.msg);
    return entryOf(result, p.uniqKey, transactionId ?? '');
  }
  const r = await s.ctx.putMessage(p.msg, 'send');
  if (r.appendResult && p.msg.topic === topic) s.pop.notifyMessageArrived(topic);
  return entryOf(r, p.uniqKey, '', recallHandleOf(p.msg, s.ctx.config.brokerName) ?? '');
}

/** The messages form one batch (see the file comment): null when they must be sent one by one. */
function asBatch(s: GrpcServices, messages: Message[], peer: string, now: number): Inbound[] | null {
  const topic = messages[0]!.topic?.name;
  if (messages.some((m) => m.topic?.name !== topic)) return null;
  const opts = { bornHost: peerAddress(peer), storeHost: s.ctx.storeHost, nowMs: now, maxBodySizeBytes: Math.min(s.config.grpcMaxBodySizeBytes, s.ctx.config.maxMessageSize) };
  const parsed: Inbound[] = [];
  for (const m of messages) {
    const p = fromProtoMessage(m, opts);
    if (isInboundError(p)) return null;
    parsed.push(p);
  }
  const first = parsed[0]!;
  if (first.kind !== 'NORMAL' && first.kind !== 'FIFO') return null;
  const group = first.msg.properties.get('__SHARDINGKEY');
  return parsed.every((p) => p.kind === first.kind && p.msg.properties.get('__SHARDINGKEY') === group) ? parsed : null;
}

/** Stores a batch (asBatch) as one atomic append; one entry per message. */
async function sendBatch(s: GrpcServices, batch: Inbound[]): Promise<SendResultEntry[]> {
  const first = batch[0]!;
  const tc = findTopic(s, first.msg.topic, true);
  if (isStatus(tc)) return batch.map((p) => failed(tc.code as CodeName, tc.message, p.uniqKey));
  if (!PermName.isWriteable(tc.perm) || !PermName.isWriteable(s.ctx.config.brokerPermission) || tc.writeQueueNums <= 0) {
    return batch.map((p) => failed(Code.FORBIDDEN, `topic ${tc.topicName} is not writable`, p.uniqKey));
  }
  const wrongType = messageTypeRefusal(tc, first.kind);
  if (wrongType) return batch.map((p) => failed(Code.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE, wrongType, p.uniqKey));
  const queueId = chooseQueue(s, first, tc.writeQueueNums);
  for (const p of batch) p.msg.queueId = queueId;
  const r = await s.ctx.putMessages(batch.map((p) => p.msg));
  if (r.appendResult) s.pop.notifyMessageArrived(first.msg.topic);
  return batch.map((p, i) => {
    const a = r.appendResults?.[i];
    return entryOf(a ? { status: r.status, appendResult: a, ...(r.remark ? { remark: r.remark } : {}) } : r, p.uniqKey);
  });
}

interface EndTransactionRequest {
  topic: Resource | null;
  message_id: string;
  transaction_id: string;
  resolution: string;
  source: string;
}

export function sendHandlers(s: GrpcServices): Record<string, grpc.UntypedHandleCall> {
  return {
    SendMessage: unary<{ messages: Message[] }, { status: Status; entries: SendResultEntry[] }>(s, 'SendMessage', async (req, call) => {
      s.sessions.touch(clientIdOf(call));
      const messages = req.messages ?? [];
      if (messages.length === 0) return { status: status(Code.BAD_REQUEST, 'no message to send'), entries: [] };
      // Every topic is checked before anything is stored: one illegal or system topic refuses the request.
      for (const m of messages) {
        const refused = checkTopicName(m.topic?.name);
        if (refused) return { status: refused, entries: [] };
      }
      const batch = messages.length > 1 ? asBatch(s, messages, call.getPeer(), s.ctx.clock.nowMs()) : null;
      let entries: SendResultEntry[];
      if (batch) {
        entries = await sendBatch(s, batch);
      } else {
        entries = [];
        for (const m of messages) entries.push(await sendOne(s, m, call.getPeer()));
      }
      const bad = entries.find((e) => e.status.code !== Code.OK);
      // one status for every entry (a batch is stored or refused whole): that status
      const same = entries.every((e) => e.status.code === entries[0]!.status.code);
      const top = !bad ? OK_STATUS : same ? bad.status : status(Code.INTERNAL_SERVER_ERROR, `some messages were not stored: ${bad.status.message}`);
      return { status: top, entries };
    }),

    EndTransaction: unary<EndTransactionRequest, StatusOnly>(s, 'EndTransaction', async (req, call) => {
      s.sessions.touch(clientIdOf(call));
      const refused = checkTopicName(req.topic?.name);
      if (refused) return { status: refused };
      if (req.resolution !== 'COMMIT' && req.resolution !== 'ROLLBACK') return { status: OK_STATUS };
      const id = decodeTransactionId(req.transaction_id);
      if (!id) return { status: status(Code.INVALID_TRANSACTION_ID, `transaction id ${JSON.stringify(req.transaction_id)} was not issued by this broker`) };
      const r = await s.transactions.end({
        commitLogOffset: id.commitLogOffset,
        halfQueueOffset: id.halfQueueOffset,
        ...(req.message_id ? { messageId: req.message_id } : {}),
        resolution: req.resolution,
        fromCheck: req.source === 'SOURCE_SERVER_CHECK',
      });
      if (r.ok) {
        if (r.committed?.appendResult && req.topic?.name) s.pop.notifyMessageArrived(req.topic.name);
        return { status: OK_STATUS };
      }
      return { status: status(r.reason === 'PUT_FAILED' ? Code.INTERNAL_SERVER_ERROR : Code.INVALID_TRANSACTION_ID, r.message) };
    }),

    // Apache proxy: a topic whose message.type admits no DELAY message → MESSAGE_PROPERTY_CONFLICT_WITH_TYPE
    // (ProducerProcessor.recallMessage validates it first; an untyped topic admits all, as for sends);
    // a handle that does not decode → INTERNAL_SERVER_ERROR; broker refusals keep their text,
    // TOPIC_NOT_EXIST → TOPIC_NOT_FOUND, every other broker code → INTERNAL_SERVER_ERROR.
    RecallMessage: unary<{ topic: Resource | null; recall_handle: string }, StatusOnly & { message_id: string }>(s, 'RecallMessage', async (req, call) => {
      s.sessions.touch(clientIdOf(call));
      const refused = checkTopicName(req.topic?.name);
      if (refused) return { status: refused, message_id: '' };
      const tc = s.ctx.topicConfigManager.selectTopicConfig(req.topic!.name);
      const wrongType = tc ? messageTypeRefusal(tc, 'DELAY') : null;
      if (wrongType) return { status: status(Code.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE, wrongType), message_id: '' };
      const r = await s.recall.recall({ topic: req.topic!.name, recallHandle: req.recall_handle ?? '', bornHost: peerAddress(call.getPeer()) });
      if (r.ok) return { status: OK_STATUS, message_id: r.msgId };
      const code = r.code === ResponseCode.TOPIC_NOT_EXIST ? Code.TOPIC_NOT_FOUND : Code.INTERNAL_SERVER_ERROR;
      return { status: status(code, r.remark), message_id: '' };
    }),
    SyncLiteSubscription: unary<unknown, StatusOnly>(s, 'SyncLiteSubscription', () => ({ status: status(Code.UNSUPPORTED, 'lite topics are not supported') })),
  };
}
