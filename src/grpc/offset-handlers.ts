/**
 * Offset RPCs the Java 5.x PullConsumer uses: QueryOffset, GetOffset, UpdateOffset, PullMessage.
 *
 * QueryOffset   BEGINNING → queue min offset, END → queue max offset, TIMESTAMP → first offset
 *               stored at/after the timestamp (store getOffsetInQueueByTime).
 * GetOffset     the group's committed offset (consumerOffset.json); none → OFFSET_NOT_FOUND.
 * UpdateOffset  commits an offset (must be within [0, max]) → ILLEGAL_OFFSET otherwise.
 * PullMessage   plain pull from one queue: stream of status, messages (no receipt handle),
 *               next_offset. An empty result long-polls for long_polling_timeout (capped as for
 *               ReceiveMessage). Offset out of range → ILLEGAL_OFFSET with next_offset set to the
 *               store's suggestion. The filter expression (TAG, or SQL with enablePropertyFilter)
 *               filters as in ReceiveMessage; refused → ILLEGAL_FILTER_EXPRESSION.
 * Topics and groups are checked as everywhere in the front (resource-validator.ts).
 */
import type * as grpc from '@grpc/grpc-js';
import { decodeRecord } from '../common/message/record-codec.js';
import { clientIdOf, unary, type GrpcServices } from './grpc-services.js';
import { toProtoMessage } from './message-converter.js';
import { convertOrSkip, maxInflatedBodyBytes } from './undeliverable-body.js';
import { messageFilterOf } from './filter-expression.js';
import { findTopic, isStatus } from './route-handlers.js';
import { checkGroupName } from './resource-validator.js';
import { Code, durationMs, OK_STATUS, status, timestampMs, type Duration, type FilterExpression, type MessageQueue, type Resource, type Status, type Timestamp } from './proto/v2-types.js';

type OffsetReply = { status: Status; offset: number };

function queueOf(s: GrpcServices, mq: MessageQueue | null): { topic: string; queueId: number } | Status {
  const tc = findTopic(s, mq?.topic?.name, false);
  if (isStatus(tc)) return tc;
  const queueId = mq?.id ?? -1;
  if (!Number.isInteger(queueId) || queueId < 0 || queueId >= Math.max(tc.readQueueNums, tc.writeQueueNums)) {
    return status(Code.BAD_REQUEST, `queue id ${queueId} does not exist in topic ${tc.topicName}`);
  }
  return { topic: tc.topicName, queueId };
}

interface PullMessageRequest {
  group: Resource | null;
  message_queue: MessageQueue | null;
  offset: number;
  batch_size: number;
  filter_expression: FilterExpression | null;
  long_polling_timeout: Duration | null;
}

type PullCall = grpc.ServerWritableStream<PullMessageRequest, Record<string, unknown>>;

async function pull(s: GrpcServices, call: PullCall): Promise<void> {
  const req = call.request;
  const end = (items: Array<Record<string, unknown>>): void => {
    if (call.cancelled) return;
    for (const i of items) call.write(i);
    call.end();
  };
  s.sessions.touch(clientIdOf(call));
  const group = req.group?.name ?? '';
  const q = queueOf(s, req.message_queue);
  if (isStatus(q)) return end([{ status: q }]);
  const badGroup = checkGroupName(group);
  if (badGroup) return end([{ status: badGroup }]);
  const filter = messageFilterOf(s.ctx.config.enablePropertyFilter, q.topic, req.filter_expression);
  if (filter && 'code' in filter) return end([{ status: filter }]);
  const batch = Math.min(Math.max(req.batch_size || 1, 1), 64);
  const d = call.getDeadline();
  const deadline = d instanceof Date ? d.getTime() : Number(d) || Date.now() + 30_000;
  const endAt = Math.min(Date.now() + Math.min(durationMs(req.long_polling_timeout), s.config.grpcMaxPollingTimeMs), deadline - s.config.grpcPollingReserveMs);
  let offset = Number(req.offset);
  for (;;) {
    const r = await s.ctx.store.getMessage(group, q.topic, q.queueId, offset, batch, filter);
    if (r.status === 'FOUND' && r.messages.length > 0) {
      const items: Array<Record<string, unknown>> = [{ status: OK_STATUS }];
      const cap = maxInflatedBodyBytes(s.ctx.config.maxMessageSize);
      for (const rec of r.messages) {
        const message = convertOrSkip(s.logger, `group ${group}`, () => toProtoMessage(decodeRecord(rec, 0), {}, cap));
        if (message !== null) items.push({ message });
      }
      items.push({ next_offset: r.nextBeginOffset });
      return end(items);
    }
    if (r.status === 'OFFSET_TOO_SMALL' || r.status === 'OFFSET_OVERFLOW_BADLY' || r.status === 'NO_MATCHED_LOGIC_QUEUE') {
      return end([{ status: status(Code.ILLEGAL_OFFSET, `offset ${req.offset} is outside [${r.minOffset}, ${r.maxOffset}]`) }, { next_offset: r.nextBeginOffset }]);
    }
    if (r.status === 'NO_MATCHED_MESSAGE' && r.nextBeginOffset > offset && !call.cancelled && Date.now() < endAt) {
      // everything read so far was filtered out: read on from there without waiting
      offset = r.nextBeginOffset;
      continue;
    }
    const left = endAt - Date.now();
    if (left <= 0 || call.cancelled || s.stopping()) return end([{ status: status(Code.MESSAGE_NOT_FOUND, 'no new message') }, { next_offset: r.nextBeginOffset }]);
    await s.pop.waitQueue.wait(q.topic, Math.min(left, 500));
  }
}

export function offsetHandlers(s: GrpcServices): Record<string, grpc.UntypedHandleCall> {
  return {
    QueryOffset: unary<{ message_queue: MessageQueue | null; query_offset_policy: string; timestamp?: Timestamp | null }, OffsetReply>(s, 'QueryOffset', async (req) => {
      const q = queueOf(s, req.message_queue);
      if (isStatus(q)) return { status: q, offset: 0 };
      const store = s.ctx.store;
      switch (req.query_offset_policy) {
        case 'END':
          return { status: OK_STATUS, offset: store.getMaxOffsetInQueue(q.topic, q.queueId) };
        case 'TIMESTAMP':
          return { status: OK_STATUS, offset: await store.getOffsetInQueueByTime(q.topic, q.queueId, timestampMs(req.timestamp)) };
        default:
          return { status: OK_STATUS, offset: store.getMinOffsetInQueue(q.topic, q.queueId) };
      }
    }),

    GetOffset: unary<{ group: Resource | null; message_queue: MessageQueue | null }, OffsetReply>(s, 'GetOffset', (req) => {
      const q = queueOf(s, req.message_queue);
      if (isStatus(q)) return { status: q, offset: 0 };
      const badGroup = checkGroupName(req.group?.name);
      if (badGroup) return { status: badGroup, offset: 0 };
      const offset = s.ctx.consumerOffsetManager.queryOffset(req.group!.name, q.topic, q.queueId);
      return offset < 0 ? { status: status(Code.OFFSET_NOT_FOUND, 'the group has no offset for this queue'), offset: 0 } : { status: OK_STATUS, offset };
    }),

    UpdateOffset: unary<{ group: Resource | null; message_queue: MessageQueue | null; offset: number }, { status: Status }>(s, 'UpdateOffset', (req, call) => {
      const q = queueOf(s, req.message_queue);
      if (isStatus(q)) return { status: q };
      const group = req.group?.name ?? '';
      const badGroup = checkGroupName(group);
      if (badGroup) return { status: badGroup };
      const max = s.ctx.store.getMaxOffsetInQueue(q.topic, q.queueId);
      const offset = Number(req.offset);
      if (!Number.isSafeInteger(offset) || offset < 0 || offset > max) return { status: status(Code.ILLEGAL_OFFSET, `offset ${req.offset} is outside [0, ${max}]`) };
      s.ctx.consumerOffsetManager.commitOffset(clientIdOf(call) || call.getPeer(), group, q.topic, q.queueId, offset);
      return { status: OK_STATUS };
    }),

    PullMessage: ((call: PullCall) => {
      pull(s, call).catch((e: Error) => {
        s.logger.error(`PullMessage failed: ${e.stack ?? e.message}`);
        if (!call.cancelled) {
          call.write({ status: status(Code.INTERNAL_SERVER_ERROR, e.message) });
          call.end();
        }
      });
    }) as grpc.handleServerStreamingCall<PullMessageRequest, Record<string, unknown>>,
  };
}
