/**
 * 321 QUERY_CONSUME_QUEUE (mqadmin `queryCq`; mirrors Apache `AdminBrokerProcessor
 * .queryConsumeQueue`): header topic, queueId, index, count (default 10), consumerGroup? → body
 * QueryConsumeQueueResponseBody
 *   {"maxQueueIndex","minQueueIndex","queueData":[{"physicOffset","physicSize","tagsCode",
 *    "eval"},…],"subscriptionData"?,"filterData"?}
 * with up to `count` entries (at most 1,000) of the ConsumeQueue from `index` on. With a
 * consumerGroup: the group's live subscription to the topic and, per entry, whether its tag
 * filter passes the entry (`eval`; SQL92 subscriptions are evaluated on the record, so `eval`
 * says only whether the tags code could match); a group not subscribed → filterData
 * "<group>@<topic> is not online!" (Apache's text). A queue that does not exist → 1 SYSTEM_ERROR
 * "<queueId>@<topic> is not exist!".
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getInt, getLong, getOptionalInt, getOptionalString, getString } from '../../remoting/headers/header-fields.js';
import type { BrokerContext } from '../broker-context.js';
import { createMessageFilter } from '../filter/expression-filter.js';
import { subscriptionDataJson } from './client-connection-processors.js';
import { javaLongJson } from './message-queue-json.js';

/** Most entries one request returns. */
export const QUERY_CONSUME_QUEUE_MAX_COUNT = 1000;

export function queryConsumeQueueHandler(ctx: BrokerContext): RequestHandler {
  return ({ request }) => {
    const ext = request.extFields;
    const topic = getString(ext, 'topic');
    const queueId = getInt(ext, 'queueId');
    const index = getLong(ext, 'index');
    const count = Math.min(Math.max(0, getOptionalInt(ext, 'count') ?? 10), QUERY_CONSUME_QUEUE_MAX_COUNT);
    const group = getOptionalString(ext, 'consumerGroup');
    const store = ctx.store;
    const entries = store.getConsumeQueueEntries?.(topic, queueId, index, count) ?? null;
    if (entries === null) return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `${queueId}@${topic} is not exist!`);
    const parts: string[] = [];
    let filter = null;
    if (group) {
      const sub = ctx.consumerManager.findSubscriptionData(group, topic);
      if (sub) {
        parts.push(`"subscriptionData":${JSON.stringify(subscriptionDataJson(sub))}`);
        filter = createMessageFilter(sub);
      } else {
        parts.push(`"filterData":${JSON.stringify(`${group}@${topic} is not online!`)}`);
      }
    }
    const rows = entries.map((e) =>
      `{"physicOffset":${javaLongJson(e.phyOffset)},"physicSize":${e.sizeBytes},"tagsCode":${javaLongJson(e.tagsCode)},"eval":${filter ? filter.isMatchedByConsumeQueue(e.tagsCode) : false}}`,
    );
    parts.push(`"maxQueueIndex":${javaLongJson(store.getMaxOffsetInQueue(topic, queueId))}`, `"minQueueIndex":${javaLongJson(store.getMinOffsetInQueue(topic, queueId))}`, `"queueData":[${rows.join(',')}]`);
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(`{${parts.join(',')}}`, 'utf8'));
  };
}
