/**
 * ReceiveMessage, AckMessage, ChangeInvisibleDuration, ForwardMessageToDeadLetterQueue
 * (spec B3, B6) over PopService.
 *
 * ReceiveMessage pops from every readable queue of the topic (the requested queue id is ignored:
 * the 1.0.8 client only ever names queue 0 or the -1 assignment). With nothing to hand out it
 * long-polls: it parks on the topic until a put or a state change wakes it, an in-flight message
 * becomes visible again, or the poll time ends; it re-checks at least every POLL_RECHECK_MS as a
 * safety net (puts by other producers wake it only when the store's arrival listener is wired to
 * `GrpcFront.notifyMessageArriving`). The poll time is the request's long_polling_timeout, capped by
 * grpcMaxPollingTimeMs and by the call deadline minus grpcPollingReserveMs, so the server always
 * ends the stream first. Reply stream: status OK, delivery_timestamp, then the messages; or a
 * single status MESSAGE_NOT_FOUND.
 * Invisible time: invisible_duration, else grpcDefaultInvisibleTimeMs (push consumers send none);
 * outside [grpcMinInvisibleTimeMs, grpcMaxInvisibleTimeMs] (ChangeInvisibleDuration: [0, max]) →
 * ILLEGAL_INVISIBLE_TIME with Apache's text (invisibleTimeProblem).
 * Deliveries of `auto_renew` requests (push consumers) are renewed while the client is alive
 * (receipt-renewer.ts).
 * Every RPC here checks its topic and group first (resource-validator.ts): illegal names and
 * system topics → ILLEGAL_TOPIC, illegal or CID_RMQ_SYS_ groups → ILLEGAL_CONSUMER_GROUP.
 * The filter expression (TAG, or SQL with enablePropertyFilter) is checked next
 * (filter-expression.ts): refused → ILLEGAL_FILTER_EXPRESSION; filtered-out messages are skipped
 * and count as done for the group, as with tags.
 */
import type * as grpc from '@grpc/grpc-js';
import type { MessageFilter } from '../store/message-store.js';
import { messageFilterOf } from './filter-expression.js';
import type { HandleCheck } from '../broker/pop/pop-service.js';
import { clientIdOf, unary, type GrpcServices, type StatusOnly } from './grpc-services.js';
import { toProtoMessage } from './message-converter.js';
import { convertOrSkip, maxInflatedBodyBytes } from './undeliverable-body.js';
import { findTopic, isStatus } from './route-handlers.js';
import { checkTopicAndGroup } from './resource-validator.js';
import { Code, durationMs, msToTimestamp, OK_STATUS, status, type CodeName, type Duration, type FilterExpression, type MessageQueue, type Resource, type Status } from './proto/v2-types.js';

const POLL_RECHECK_MS = 500;
const MAX_BATCH = 32;

interface ReceiveMessageRequest {
  group: Resource | null;
  message_queue: MessageQueue | null;
  filter_expression: FilterExpression | null;
  batch_size: number;
  invisible_duration?: Duration | null;
  auto_renew: boolean;
  long_polling_timeout?: Duration | null;
}

type ReceiveCall = grpc.ServerWritableStream<ReceiveMessageRequest, Record<string, unknown>>;

function deadlineMs(call: ReceiveCall): number {
  const d = call.getDeadline();
  const ms = d instanceof Date ? d.getTime() : Number(d);
  return Number.isFinite(ms) && ms > 0 ? ms : Date.now() + 30_000;
}

/**
 * Apache GrpcValidator.validateInvisibleTime: null when `ms` is within [minMs, maxMs], else its
 * text ("the invisibleTime is too small. min is 10000" / "... too large. max is 43200000").
 */
export function invisibleTimeProblem(ms: number, minMs: number, maxMs: number): string | null {
  if (ms < minMs) return `the invisibleTime is too small. min is ${minMs}`;
  if (ms > maxMs) return `the invisibleTime is too large. max is ${maxMs}`;
  return null;
}

async function receive(s: GrpcServices, call: ReceiveCall): Promise<void> {
  const req = call.request;
  const finish = (items: Array<Record<string, unknown>>): void => {
    if (call.cancelled) return;
    for (const item of items) call.write(item);
    call.end();
  };
  const fail = (st: Status): void => finish([{ status: st }]);
  s.sessions.touch(clientIdOf(call));
  const group = req.group?.name ?? '';
  const topic = req.message_queue?.topic?.name;
  const refused = checkTopicAndGroup(topic, group);
  if (refused) return fail(refused);
  const tc = findTopic(s, topic, false);
  if (isStatus(tc)) return fail(tc);
  const sgc = s.ctx.subscriptionGroupManager.findSubscriptionGroupConfig(group);
  if (!sgc) return fail(status(Code.CONSUMER_GROUP_NOT_FOUND, `consumer group ${group} does not exist`));
  if (!sgc.consumeEnable) return fail(status(Code.FORBIDDEN, `consumer group ${group} may not consume`));
  const filter = messageFilterOf(s.ctx.config.enablePropertyFilter, tc.topicName, req.filter_expression);
  if (filter && 'code' in filter) return fail(filter);
  const invisibleMs = req.invisible_duration ? durationMs(req.invisible_duration) : s.config.grpcDefaultInvisibleTimeMs;
  const badInvisible = invisibleTimeProblem(invisibleMs, s.config.grpcMinInvisibleTimeMs, s.config.grpcMaxInvisibleTimeMs);
  if (badInvisible) return fail(status(Code.ILLEGAL_INVISIBLE_TIME, badInvisible));
  const batchSize = Math.min(Math.max(req.batch_size || 1, 1), MAX_BATCH);
  const pollMs = Math.min(durationMs(req.long_polling_timeout), s.config.grpcMaxPollingTimeMs);
  const endAt = Math.min(Date.now() + pollMs, deadlineMs(call) - s.config.grpcPollingReserveMs);
  let cancelled = false;
  call.on('cancelled', () => (cancelled = true));
  for (;;) {
    const r = await s.pop.pop({ group, topic: tc.topicName, filter: filter as MessageFilter | null, batchSize, invisibleMs, fifo: sgc.consumeMessageOrderly });
    if (r.messages.length > 0) {
      const items: Array<Record<string, unknown>> = [{ status: OK_STATUS }, { delivery_timestamp: msToTimestamp(s.ctx.clock.nowMs()) }];
      const cap = maxInflatedBodyBytes(s.ctx.config.maxMessageSize);
      for (const p of r.messages) {
        const message = convertOrSkip(s.logger, `group ${group}`, () => toProtoMessage(p.message, { receiptHandle: p.receiptHandle, attempt: p.attempt, invisibleMs }, cap));
        if (message === null) continue;
        items.push({ message });
        if (req.auto_renew) s.renewer.track(clientIdOf(call), group, p.receiptHandle, p.attempt);
      }
      if (items.length > 2) return finish(items);
      continue; // every popped message was undeliverable (logged): look for others
    }
    const left = endAt - Date.now();
    if (left <= 0 || cancelled || s.stopping()) return fail(status(Code.MESSAGE_NOT_FOUND, 'no new message'));
    const untilVisible = r.nextVisibleAtMs !== undefined ? Math.max(1, r.nextVisibleAtMs - s.ctx.clock.nowMs()) : Infinity;
    await s.pop.waitQueue.wait(tc.topicName, Math.min(left, untilVisible, POLL_RECHECK_MS));
  }
}

function codeOf(c: HandleCheck): CodeName {
  return c.ok ? Code.OK : Code.INVALID_RECEIPT_HANDLE;
}

interface AckRequest {
  group: Resource | null;
  topic: Resource | null;
  entries: Array<{ message_id: string; receipt_handle: string }>;
}

interface AckResultEntry {
  message_id: string;
  receipt_handle: string;
  status: Status;
}

export function consumeHandlers(s: GrpcServices): Record<string, grpc.UntypedHandleCall> {
  return {
    ReceiveMessage: ((call: ReceiveCall) => {
      receive(s, call).catch((e: Error) => {
        s.logger.error(`ReceiveMessage failed: ${e.stack ?? e.message}`);
        if (!call.cancelled) {
          call.write({ status: status(Code.INTERNAL_SERVER_ERROR, e.message) });
          call.end();
        }
      });
    }) as grpc.handleServerStreamingCall<ReceiveMessageRequest, Record<string, unknown>>,

    AckMessage: unary<AckRequest, { status: Status; entries: AckResultEntry[] }>(s, 'AckMessage', async (req, call) => {
      s.sessions.touch(clientIdOf(call));
      const group = req.group?.name ?? '';
      const refused = checkTopicAndGroup(req.topic?.name, group);
      if (refused) return { status: refused, entries: [] };
      const entries: AckResultEntry[] = [];
      for (const e of req.entries ?? []) {
        const r = await s.pop.ack(group, e.receipt_handle);
        entries.push({ message_id: e.message_id, receipt_handle: e.receipt_handle, status: r.ok ? OK_STATUS : status(codeOf(r), r.reason) });
      }
      const failed = entries.filter((e) => e.status.code !== Code.OK);
      const top = failed.length === 0 ? OK_STATUS : failed.length === entries.length ? failed[0]!.status : status(Code.MULTIPLE_RESULTS, `${failed.length} of ${entries.length} acks failed`);
      return { status: top, entries };
    }),

    ChangeInvisibleDuration: unary<{ group: Resource | null; topic: Resource | null; receipt_handle: string; invisible_duration: Duration | null }, StatusOnly & { receipt_handle: string }>(
      s,
      'ChangeInvisibleDuration',
      async (req, call) => {
        s.sessions.touch(clientIdOf(call));
        const group = req.group?.name ?? '';
        const refused = checkTopicAndGroup(req.topic?.name, group);
        if (refused) return { status: refused, receipt_handle: '' };
        const ms = durationMs(req.invisible_duration);
        const bad = invisibleTimeProblem(ms, 0, s.config.grpcMaxInvisibleTimeMs);
        if (bad) return { status: status(Code.ILLEGAL_INVISIBLE_TIME, bad), receipt_handle: '' };
        const r = await s.pop.changeInvisibleDuration(group, req.receipt_handle, ms);
        return r.ok ? { status: OK_STATUS, receipt_handle: r.receiptHandle! } : { status: status(Code.INVALID_RECEIPT_HANDLE, r.reason), receipt_handle: '' };
      },
    ),

    ForwardMessageToDeadLetterQueue: unary<{ group: Resource | null; topic: Resource | null; receipt_handle: string }, StatusOnly>(s, 'ForwardMessageToDeadLetterQueue', async (req, call) => {
      s.sessions.touch(clientIdOf(call));
      const group = req.group?.name ?? '';
      const refused = checkTopicAndGroup(req.topic?.name, group);
      if (refused) return { status: refused };
      const r = await s.pop.forwardToDeadLetterQueue(group, req.receipt_handle);
      return { status: r.ok ? OK_STATUS : status(Code.INVALID_RECEIPT_HANDLE, r.reason) };
    }),
  };
}
