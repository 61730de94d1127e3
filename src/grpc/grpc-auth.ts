/**
 * ACL 2.0 on the gRPC v2 front (Apache proxy AuthenticationPipeline/AuthorizationPipeline and
 * DefaultAuthenticationContextBuilder/DefaultAuthorizationContextBuilder for gRPC): every
 * MessagingService call is checked before its handler runs.
 *
 * Authentication: metadata `authorization: MQv2-HMAC-SHA1 Credential=<ak>, SignedHeaders=
 * x-mq-date-time, Signature=<hex>` and `x-mq-date-time`; the signature is HmacSHA1(secretKey,
 * date-time) (acl-signature.ts). No authorization header → "username cannot be null."; no
 * date-time → "datetime is null.". Like Apache the date-time is not checked for freshness.
 *
 * Authorization, per RPC (Apache's list; `*` marks tsmq additions where Apache checks nothing):
 *   QueryRoute Topic [Pub,Sub] · SendMessage Topic Pub · EndTransaction Topic Pub ·
 *   Heartbeat (consumers) Group Sub · QueryAssignment, ReceiveMessage, AckMessage,
 *   ForwardMessageToDeadLetterQueue Group Sub + Topic Sub · ChangeInvisibleDuration Group Sub ·
 *   NotifyClientTermination Group Sub (when named) · *PullMessage, *GetOffset, *QueryOffset
 *   Group/Topic Sub · *UpdateOffset Group/Topic [Sub,Update].
 *   Telemetry is authenticated when the stream opens; its settings are not authorized (the
 *   RPCs the client then makes are).
 *
 * A refusal is answered as Apache's proxy does: the RPC's normal response with
 * `status {code: UNAUTHORIZED, message: <Apache's message>}` (streams: one such response, then
 * end). Refusals are logged rate-limited with the access key and resource.
 */
import type * as grpc from '@grpc/grpc-js';
import type { RateLimitedLog } from '../common/logging/rate-limited-log.js';
import { AuthenticationError, AuthorizationError } from '../auth/auth-error.js';
import { authenticate, authorize, type AuthMetadata, type AuthorizationContext } from '../auth/auth-evaluator.js';
import { groupResource, isRetryTopic, resourceKey, topicResource, type Action } from '../auth/auth-model.js';
import type { AuthConfig } from '../auth/auth-config.js';
import { Code, status } from './proto/v2-types.js';

export interface GrpcAuthOptions {
  config: Pick<AuthConfig, 'authenticationEnabled' | 'authorizationEnabled' | 'authenticationWhitelist' | 'authorizationWhitelist'>;
  metadata: AuthMetadata;
  refusalLog: RateLimitedLog;
}

type Pair = Omit<AuthorizationContext, 'username' | 'sourceIp'>;
type Req = Record<string, unknown>;

const nameOf = (r: unknown): string => {
  const n = (r as { name?: unknown } | null | undefined)?.name;
  return typeof n === 'string' ? n : '';
};

function need(name: string, what: 'topic' | 'group'): string {
  if (name.trim() === '') throw new AuthorizationError(`${what} is null.`);
  return name;
}

const topicPair = (name: string, actions: Action[]): Pair => (isRetryTopic(name) ? { resource: groupResource(name), actions } : { resource: topicResource(need(name, 'topic')), actions });
const groupPair = (name: string, actions: Action[]): Pair => ({ resource: groupResource(need(name, 'group')), actions });
const subPairs = (req: Req, topic: unknown, actions: Action[] = ['Sub']): Pair[] => [groupPair(nameOf(req.group), actions), topicPair(nameOf(topic), actions)];
const mqTopic = (req: Req): unknown => (req.message_queue as { topic?: unknown } | null | undefined)?.topic;

const CONSUMER_TYPES = new Set(['PUSH_CONSUMER', 'SIMPLE_CONSUMER', 'PULL_CONSUMER']);

/** RPC name → pairs the caller must be allowed; absent → none (authentication only). */
const RULES: Record<string, (req: Req) => Pair[]> = {
  QueryRoute: (r) => [{ resource: topicResource(need(nameOf(r.topic), 'topic')), actions: ['Pub', 'Sub'] }],
  SendMessage: (r) => {
    const msgs = Array.isArray(r.messages) ? (r.messages as Req[]) : [];
    if (msgs.length === 0) throw new AuthorizationError('message is null.');
    return [topicPair(nameOf(msgs[0]!.topic), ['Pub'])];
  },
  EndTransaction: (r) => [topicPair(nameOf(r.topic), ['Pub'])],
  Heartbeat: (r) => (CONSUMER_TYPES.has(String(r.client_type)) ? [groupPair(nameOf(r.group), ['Sub'])] : []),
  QueryAssignment: (r) => subPairs(r, r.topic),
  ReceiveMessage: (r) => {
    if (!r.message_queue) throw new AuthorizationError('messageQueue is null.');
    return subPairs(r, mqTopic(r));
  },
  AckMessage: (r) => subPairs(r, r.topic),
  ForwardMessageToDeadLetterQueue: (r) => subPairs(r, r.topic),
  ChangeInvisibleDuration: (r) => [groupPair(nameOf(r.group), ['Sub'])],
  NotifyClientTermination: (r) => (nameOf(r.group).trim() ? [groupPair(nameOf(r.group), ['Sub'])] : []),
  PullMessage: (r) => subPairs(r, mqTopic(r)),
  GetOffset: (r) => subPairs(r, mqTopic(r)),
  QueryOffset: (r) => [topicPair(nameOf(mqTopic(r)), ['Sub', 'Get'])],
  UpdateOffset: (r) => subPairs(r, mqTopic(r), ['Sub', 'Update']),
};

function firstValue(md: grpc.Metadata, key: string): string | undefined {
  const v = md.get(key)[0];
  return v === undefined ? undefined : String(v);
}

/** Source IP of a grpc-js peer string ("ipv4:1.2.3.4:5", "[::1]:5", "1.2.3.4:5"). */
export function grpcSourceIp(peer: string): string {
  const text = peer.replace(/^ipv[46]:/, '');
  const i = text.lastIndexOf(':');
  return (i < 0 ? text : text.slice(0, i)).replace(/^\[|\]$/g, '');
}

/**
 * Checks one call. Returns null when allowed, else the refusal message.
 * @throws nothing: unexpected errors become a refusal with Apache's generic message.
 */
export function checkGrpcCall(opts: GrpcAuthOptions, rpc: string, md: grpc.Metadata, peer: string, request: Req | null): string | null {
  const { config, metadata } = opts;
  const auth = firstValue(md, 'authorization');
  let username: string | undefined;
  let signature: string | undefined;
  if (auth) {
    const sp = auth.indexOf(' ');
    for (const kv of (sp < 0 ? '' : auth.slice(sp + 1)).split(',')) {
      const [k, v] = kv.trim().split('=', 2) as [string, string | undefined];
      if (k === 'Credential' && v !== undefined) username = v.split('/')[0];
      if (k === 'Signature' && v !== undefined && /^([0-9a-fA-F]{2})*$/.test(v)) signature = Buffer.from(v, 'hex').toString('base64');
      else if (k === 'Signature') signature = '';
    }
  }
  const sourceIp = grpcSourceIp(peer);
  const refuse = (what: string, e: unknown, resource?: string): string => {
    const message = e instanceof AuthenticationError || e instanceof AuthorizationError ? e.message : 'Authorization failed. Please verify your access rights and try again.';
    opts.refusalLog.warn(`grpc-${what}`, `gRPC: ${what} refused for ${rpc} from ${peer}, AccessKey ${username === undefined ? '(none)' : JSON.stringify(username)}${resource ? `, resource ${resource}` : ''}: ${message}`);
    return message;
  };
  const rpcCode = `apache.rocketmq.v2.${rpc}Request`;
  if (config.authenticationEnabled && !config.authenticationWhitelist.has(rpcCode)) {
    try {
      const dateTime = firstValue(md, 'x-mq-date-time');
      if (auth && !dateTime) throw new AuthenticationError('datetime is null.');
      authenticate({ username, signature, content: Buffer.from(dateTime ?? '', 'utf8') }, metadata);
    } catch (e) {
      return refuse('authentication', e);
    }
  }
  if (config.authorizationEnabled && request && !config.authorizationWhitelist.has(rpcCode)) {
    let pairs: Pair[];
    try {
      pairs = RULES[rpc]?.(request) ?? [];
    } catch (e) {
      return refuse('authorization', e);
    }
    for (const p of pairs) {
      try {
        authorize({ ...p, username, sourceIp }, metadata);
      } catch (e) {
        return refuse('authorization', e, resourceKey(p.resource));
      }
    }
  }
  return null;
}

/** Wraps every handler of the MessagingService implementation with checkGrpcCall. */
export function guardGrpcHandlers(handlers: Record<string, grpc.UntypedHandleCall>, opts: GrpcAuthOptions): Record<string, grpc.UntypedHandleCall> {
  const out: Record<string, grpc.UntypedHandleCall> = {};
  for (const [rpc, handler] of Object.entries(handlers)) {
    if (rpc === 'Telemetry') {
      out[rpc] = ((call: grpc.ServerDuplexStream<unknown, unknown>) => {
        const refusal = checkGrpcCall(opts, rpc, call.metadata, call.getPeer(), null);
        if (refusal === null) return (handler as grpc.handleBidiStreamingCall<unknown, unknown>)(call);
        call.on('error', () => undefined);
        call.write({ status: status(Code.UNAUTHORIZED, refusal) });
        call.end();
      }) as grpc.handleBidiStreamingCall<unknown, unknown>;
    } else if (rpc === 'ReceiveMessage' || rpc === 'PullMessage') {
      out[rpc] = ((call: grpc.ServerWritableStream<Req, unknown>) => {
        const refusal = checkGrpcCall(opts, rpc, call.metadata, call.getPeer(), call.request);
        if (refusal === null) return (handler as grpc.handleServerStreamingCall<Req, unknown>)(call);
        call.write({ status: status(Code.UNAUTHORIZED, refusal) });
        call.end();
      }) as grpc.handleServerStreamingCall<Req, unknown>;
    } else {
      out[rpc] = ((call: grpc.ServerUnaryCall<Req, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        const refusal = checkGrpcCall(opts, rpc, call.metadata, call.getPeer(), call.request);
        if (refusal === null) return (handler as grpc.handleUnaryCall<Req, unknown>)(call, callback);
        callback(null, { status: status(Code.UNAUTHORIZED, refusal) });
      }) as grpc.handleUnaryCall<Req, unknown>;
    }
  }
  return out;
}
