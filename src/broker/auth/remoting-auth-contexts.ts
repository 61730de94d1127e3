/**
 * What a broker remoting request touches, for ACL 2.0 authorization: request code → the list of
 * (resource, actions) pairs the user must be allowed (Apache DefaultAuthorizationContextBuilder,
 * its explicit switch plus the @RocketMQAction/@RocketMQResource annotations of the header
 * classes). A topic field holding a retry topic (%RETRY%G) is checked as the group G.
 *
 * Where tsmq is stricter than Apache (Apache derives no pair, so any authenticated user passes):
 *   - codes Apache has no annotated header for, and that read messages or change state:
 *     LITE_PULL_MESSAGE (as PULL_MESSAGE), BATCH_ACK_MESSAGE and QUERY_ASSIGNMENT (Sub on their
 *     body's group and topics), DELETE_EXPIRED_COMMITLOG, SET_MESSAGE_REQUEST_MODE (Cluster Update),
 *     GET_ALL_CONSUMER_OFFSET, GET_ALL_DELAY_OFFSET, GET_ALL_MESSAGE_REQUEST_MODE,
 *     GET_TIMER_CHECK_POINT, GET_TIMER_METRICS, GET_ALL_POP_STATE (tsmq-only) (Cluster Get);
 *   - annotated headers without a resource field: GET_ALL_TOPIC_CONFIG,
 *     GET_ALL_SUBSCRIPTIONGROUP_CONFIG (Cluster Get); VIEW_MESSAGE_BY_ID without a topic (4.x
 *     clients) needs Cluster Get, with one Topic Get;
 *   - any request code not listed here needs Cluster Update (Apache: allowed), so a new admin
 *     code is closed to normal users until it is classified; a code the broker has no handler
 *     for and not listed here derives nothing (Apache: no annotated header), so an authenticated
 *     user gets REQUEST_CODE_NOT_SUPPORTED, not NO_PERMISSION.
 * CHECK_CLIENT_CONFIG (46) derives nothing, as in Apache (authentication only).
 *
 * @throws AuthorizationError("parse authorization context error.") for an undecodable body.
 */
import type { RemotingCommand, ExtFieldValue } from '../../remoting/protocol/remoting-command.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { AuthorizationError } from '../../auth/auth-error.js';
import { clusterResource, groupResource, isRetryTopic, topicResource, type Action } from '../../auth/auth-model.js';
import type { RemotingAuthContexts } from '../../auth/remoting-auth-gate.js';
import { decodeHeartbeat } from '../processors/client-manage-processor.js';
import { parseLockBatchBody } from '../processors/lock-batch-processors.js';
import { parseBatchAckBody } from '../processors/ack-message-processor.js';
import { parseLenientJson } from '../config-file/lenient-json.js';

type Ctx = ReturnType<RemotingAuthContexts>[number];
type Ext = Record<string, ExtFieldValue>;
type Rule = (ext: Ext, request: RemotingCommand, cluster: string) => Ctx[];

const text = (ext: Ext, k: string): string | undefined => {
  const v = ext[k];
  return v === undefined || v === null ? undefined : String(v);
};
const blank = (s: string | undefined): boolean => s === undefined || s.trim() === '';

/** A topic name, checked as its group when it is a retry topic (Apache buildContextByAnnotation). */
function topicOrRetryGroup(name: string, actions: Action[]): Ctx {
  return isRetryTopic(name) ? { resource: groupResource(name), actions } : { resource: topicResource(name), actions };
}

/** Annotation-style rule: each listed field present adds a pair; none present → Cluster pair when `clusterFallback`. */
function fields(actions: Action[], spec: Array<[string, 'Topic' | 'Group', string?]>, clusterFallback = false): Rule {
  return (ext, _req, cluster) => {
    const out: Ctx[] = [];
    for (const [name, type, splitter] of spec) {
      const v = text(ext, name);
      if (v === undefined) continue;
      for (const part of splitter ? v.split(splitter).filter((s) => s !== '') : [v]) {
        out.push(type === 'Topic' ? topicOrRetryGroup(part, actions) : { resource: groupResource(part), actions });
      }
    }
    if (out.length === 0 && clusterFallback) out.push({ resource: clusterResource(cluster), actions });
    return out;
  };
}

const cluster = (actions: Action[]): Rule => (_ext, _req, c) => [{ resource: clusterResource(c), actions }];

/**
 * A send: Pub on its topic; a send to a retry topic %RETRY%G is a consumer's send-back, Sub on a
 * group: `groupField`'s group when given and not blank, else G. `groupField` null: always G.
 */
function sendRule(topicField: string, groupField: string | null): Rule {
  return (ext) => {
    const topic = text(ext, topicField) ?? '';
    if (isRetryTopic(topic)) {
      const g = groupField === null ? undefined : text(ext, groupField);
      return [{ resource: groupResource(blank(g) ? topic : g!), actions: ['Sub'] }];
    }
    return [{ resource: topicResource(topic), actions: ['Pub'] }];
  };
}

function topicThenGroup(actions: Action[], groupField = 'consumerGroup'): Rule {
  return (ext) => {
    const out: Ctx[] = [];
    const topic = text(ext, 'topic') ?? '';
    if (!isRetryTopic(topic)) out.push({ resource: topicResource(topic), actions });
    out.push({ resource: groupResource(text(ext, groupField) ?? ''), actions });
    return out;
  };
}

const heartbeat: Rule = (_ext, req) => {
  const hb = decodeHeartbeat(req.body);
  const out: Ctx[] = [];
  for (const c of hb.consumers) {
    out.push({ resource: groupResource(c.groupName), actions: ['Sub'] });
    for (const s of c.subscriptions) if (!isRetryTopic(s.topic)) out.push({ resource: topicResource(s.topic), actions: ['Sub'] });
  }
  return out;
};

const lockBatch: Rule = (_ext, req) => {
  const body = parseLockBatchBody(req.body, 'lock batch');
  const out: Ctx[] = [{ resource: groupResource(body.consumerGroup), actions: ['Sub'] }];
  for (const mq of body.mqSet) if (!isRetryTopic(mq.topic)) out.push({ resource: topicResource(mq.topic), actions: ['Sub'] });
  return out;
};

const batchAck: Rule = (_ext, req) => {
  if (!req.body || req.body.length === 0) return [];
  const out: Ctx[] = [];
  for (const a of parseBatchAckBody(req.body).acks) {
    out.push({ resource: groupResource(a.consumerGroup), actions: ['Sub'] });
    out.push(topicOrRetryGroup(a.topic, ['Sub']));
  }
  return out;
};

const queryAssignment: Rule = (_ext, req) => {
  const doc = parseLenientJson((req.body ?? Buffer.alloc(0)).toString('utf8')) as Record<string, unknown> | null;
  if (!doc || typeof doc !== 'object' || typeof doc.topic !== 'string' || typeof doc.consumerGroup !== 'string') {
    throw new AuthorizationError('parse authorization context error.');
  }
  return [topicOrRetryGroup(doc.topic, ['Sub']), { resource: groupResource(doc.consumerGroup), actions: ['Sub'] }];
};

/** UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: the group named in the body (SubscriptionGroupConfig.groupName). */
const subscriptionGroupBody: Rule = (_ext, req, c) => {
  const doc = parseLenientJson((req.body ?? Buffer.alloc(0)).toString('utf8')) as Record<string, unknown> | null;
  if (!doc || typeof doc !== 'object') throw new AuthorizationError('parse authorization context error.');
  return typeof doc.groupName === 'string' && doc.groupName !== ''
    ? [{ resource: groupResource(doc.groupName), actions: ['Update'] }]
    : [{ resource: clusterResource(c), actions: ['Update'] }];
};

const C = RequestCode;

const RULES = new Map<number, Rule>([
  // V1 (SendMessageRequestHeader, whose group field is `producerGroup`): a retry-topic send is
  // Sub on the retry topic's own group. Apache 5.3.3's builder reads a field `group` that this
  // header does not have, so for every real V1 request it falls back to that group too; tsmq
  // does not read `group` (nor `producerGroup`: both are the sender's choice, and would let a
  // user with Sub on any group write into every group's retry topic).
  [C.SEND_MESSAGE, sendRule('topic', null)],
  [C.SEND_MESSAGE_V2, sendRule('b', 'a')],
  [C.SEND_BATCH_MESSAGE, sendRule('b', 'a')],
  // request-reply answers: Pub on their topic, like a send (Apache 5.3.3's context builder has no
  // case for 324/325; tsmq's fallback would ask for Cluster Update)
  [C.SEND_REPLY_MESSAGE, sendRule('topic', 'producerGroup')],
  [C.SEND_REPLY_MESSAGE_V2, sendRule('b', 'a')],
  [C.END_TRANSACTION, (ext) => (blank(text(ext, 'topic')) ? [] : [{ resource: topicResource(text(ext, 'topic')!), actions: ['Pub'] }])],
  [C.CONSUMER_SEND_MSG_BACK, (ext) => [{ resource: groupResource(text(ext, 'group') ?? ''), actions: ['Sub'] }]],
  [C.PULL_MESSAGE, topicThenGroup(['Sub'])],
  [C.LITE_PULL_MESSAGE, topicThenGroup(['Sub'])],
  [C.QUERY_MESSAGE, (ext) => [{ resource: topicResource(text(ext, 'topic') ?? ''), actions: ['Sub', 'Get'] }]],
  [C.HEART_BEAT, heartbeat],
  [C.UNREGISTER_CLIENT, (ext) => (blank(text(ext, 'consumerGroup')) ? [] : [{ resource: groupResource(text(ext, 'consumerGroup')!), actions: ['Sub'] }])],
  [C.GET_CONSUMER_LIST_BY_GROUP, (ext) => [{ resource: groupResource(text(ext, 'consumerGroup') ?? ''), actions: ['Sub', 'Get'] }]],
  [C.QUERY_CONSUMER_OFFSET, topicThenGroup(['Sub', 'Get'])],
  [C.UPDATE_CONSUMER_OFFSET, topicThenGroup(['Sub', 'Update'])],
  [C.LOCK_BATCH_MQ, lockBatch],
  [C.UNLOCK_BATCH_MQ, lockBatch],
  [C.UPDATE_AND_CREATE_TOPIC, fields(['Create'], [['topic', 'Topic']])],
  [C.DELETE_TOPIC_IN_BROKER, fields(['Delete'], [['topic', 'Topic']])],
  [C.GET_ALL_TOPIC_CONFIG, cluster(['Get'])],
  [C.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, cluster(['Get'])],
  [C.GET_ALL_CONSUMER_OFFSET, cluster(['Get'])],
  [C.GET_ALL_DELAY_OFFSET, cluster(['Get'])],
  [C.GET_TIMER_CHECK_POINT, cluster(['Get'])],
  [C.GET_ALL_POP_STATE, cluster(['Get'])],
  [C.GET_TIMER_METRICS, cluster(['Get'])],
  [C.VIEW_MESSAGE_BY_ID, fields(['Get'], [['topic', 'Topic']], true)],
  [C.GET_TOPIC_STATS_INFO, fields(['Get'], [['topic', 'Topic']])],
  [C.GET_CONSUME_STATS, fields(['Get'], [['consumerGroup', 'Group'], ['topic', 'Topic'], ['topicList', 'Topic', ';']])],
  [C.INVOKE_BROKER_TO_RESET_OFFSET, fields(['Update'], [['group', 'Group'], ['topic', 'Topic']])],
  [C.SEARCH_OFFSET_BY_TIMESTAMP, fields(['Get'], [['topic', 'Topic']])],
  [C.GET_MAX_OFFSET, fields(['Get'], [['topic', 'Topic']])],
  [C.GET_MIN_OFFSET, fields(['Get'], [['topic', 'Topic']])],
  [C.GET_EARLIEST_MSG_STORETIME, fields(['Get'], [['topic', 'Topic']])],
  [C.DELETE_EXPIRED_COMMITLOG, cluster(['Update'])],
  [C.CHECK_CLIENT_CONFIG, () => []],
  // admin codes used by mqadmin and the Dashboard (Apache's header annotations; cluster-wide views need Cluster Get)
  [C.UPDATE_BROKER_CONFIG, cluster(['Update'])],
  [C.GET_BROKER_CONFIG, cluster(['Get'])],
  [C.GET_BROKER_RUNTIME_INFO, cluster(['Get'])],
  [C.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, subscriptionGroupBody],
  [C.DELETE_SUBSCRIPTIONGROUP, fields(['Delete'], [['groupName', 'Group']], true)],
  [C.GET_CONSUMER_CONNECTION_LIST, fields(['Get'], [['consumerGroup', 'Group']], true)],
  [C.GET_PRODUCER_CONNECTION_LIST, fields(['Get'], [['producerGroup', 'Group']], true)],
  [C.GET_ALL_PRODUCER_INFO, cluster(['Get'])],
  [C.QUERY_TOPIC_CONSUME_BY_WHO, fields(['Get'], [['topic', 'Topic']], true)],
  [C.QUERY_TOPICS_BY_CONSUMER, fields(['Get'], [['group', 'Group']], true)],
  [C.GET_SYSTEM_TOPIC_LIST_FROM_BROKER, cluster(['Get'])],
  [C.CLEAN_EXPIRED_CONSUMEQUEUE, cluster(['Update'])],
  [C.CLEAN_UNUSED_TOPIC, cluster(['Update'])],
  [C.QUERY_CONSUME_QUEUE, fields(['Get'], [['topic', 'Topic']])],
  [C.GET_CONSUMER_RUNNING_INFO, fields(['Get'], [['consumerGroup', 'Group']], true)],
  [C.CONSUME_MESSAGE_DIRECTLY, fields(['Sub'], [['consumerGroup', 'Group'], ['topic', 'Topic']], true)],
  [C.CLONE_GROUP_OFFSET, fields(['Update'], [['srcGroup', 'Group'], ['destGroup', 'Group'], ['topic', 'Topic']], true)],
  [C.VIEW_BROKER_STATS_DATA, cluster(['Get'])],
  [C.GET_BROKER_CONSUME_STATS, cluster(['Get'])],
  [C.GET_TOPIC_CONFIG, fields(['Get'], [['topic', 'Topic']], true)],
  [C.GET_BROKER_HA_STATUS, cluster(['Get'])],
  [C.RECALL_MESSAGE, fields(['Pub'], [['topic', 'Topic']], true)],
  [C.CONTROLLER_GET_METADATA_INFO, cluster(['Get'])],
  [C.CONTROLLER_GET_SYNC_STATE_DATA, cluster(['Get'])],
  [C.GET_BROKER_EPOCH_CACHE, cluster(['Get'])],
  [C.CONTROLLER_ELECT_MASTER, cluster(['Update'])],
  [C.POP_MESSAGE, fields(['Sub'], [['consumerGroup', 'Group'], ['topic', 'Topic']])],
  [C.ACK_MESSAGE, fields(['Sub'], [['consumerGroup', 'Group'], ['topic', 'Topic']])],
  [C.PEEK_MESSAGE, fields(['Sub'], [['topic', 'Topic'], ['consumerGroup', 'Group']])],
  [C.CHANGE_MESSAGE_INVISIBLETIME, fields(['Sub'], [['consumerGroup', 'Group'], ['topic', 'Topic']])],
  [C.NOTIFICATION, fields(['Sub'], [['consumerGroup', 'Group'], ['topic', 'Topic']])],
  [C.POLLING_INFO, fields(['Get'], [['consumerGroup', 'Group'], ['topic', 'Topic']])],
  [C.BATCH_ACK_MESSAGE, batchAck],
  [C.QUERY_ASSIGNMENT, queryAssignment],
  [C.SET_MESSAGE_REQUEST_MODE, cluster(['Update'])],
  [C.GET_ALL_MESSAGE_REQUEST_MODE, cluster(['Get'])],
  [C.AUTH_CREATE_USER, cluster(['Update'])],
  [C.AUTH_UPDATE_USER, cluster(['Update'])],
  [C.AUTH_DELETE_USER, cluster(['Update'])],
  [C.AUTH_GET_USER, cluster(['Get'])],
  [C.AUTH_LIST_USER, cluster(['Get'])],
  [C.AUTH_CREATE_ACL, cluster(['Update'])],
  [C.AUTH_UPDATE_ACL, cluster(['Update'])],
  [C.AUTH_DELETE_ACL, cluster(['Update'])],
  [C.AUTH_GET_ACL, cluster(['Get'])],
  [C.AUTH_LIST_ACL, cluster(['Get'])],
]);

/** A code nobody serves: no pair (Apache buildContextByAnnotation without a registered header). */
const NOTHING: Rule = () => [];

/** Request codes with an explicit rule (the rest need Cluster Update). */
export const CLASSIFIED_CODES: ReadonlySet<number> = new Set(RULES.keys());

/** The broker's context builder for RemotingAuthGate; `clusterName` is brokerClusterName. */
export function brokerAuthContexts(clusterName: string): RemotingAuthContexts {
  const fallback = cluster(['Update']);
  return (request, handled) => {
    const rule = RULES.get(request.code) ?? (handled ? fallback : NOTHING);
    try {
      return rule(request.extFields ?? {}, request, clusterName);
    } catch (e) {
      if (e instanceof AuthorizationError) throw e;
      throw new AuthorizationError('parse authorization context error.');
    }
  };
}
