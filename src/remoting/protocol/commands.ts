/**
 * Builders and predicates for RemotingCommand (see remoting-command.ts for the wire layout).
 *
 * Mirrors Apache RocketMQ's RemotingCommand.createRequestCommand / createResponseCommand:
 * requests take a process-wide opaque from a counter; responses echo the request's opaque,
 * set flag bit 0 and keep the request's serialize type.
 */
import { RPC_ONEWAY, RPC_TYPE_RESPONSE } from './remoting-command.js';
import type { ExtFieldValue, RemotingCommand } from './remoting-command.js';

/**
 * Ordinal of MQVersion.Version.V4_9_4 in Apache RocketMQ (V3_4_9 = 121, V4_0_0 = 213,
 * V5_0_0 = 413). Apache's nameserver answers with standard quoted-key JSON to requests whose
 * version is at least this value.
 */
export const MQ_VERSION_V4_9_4 = 401;

/** Version written in every command we create. */
export const CURRENT_VERSION = MQ_VERSION_V4_9_4;

/** ali-ons wraps its opaque near 2^31 - 10; we wrap at 2^31 - 1 and never hand out 0. */
const MAX_OPAQUE = 0x7fffffff;
let lastOpaque = 0;

/** Next request id (1 .. 2^31-1, then wraps to 1). Process-wide, like Apache's requestId. */
export function nextOpaque(): number {
  lastOpaque = lastOpaque >= MAX_OPAQUE ? 1 : lastOpaque + 1;
  return lastOpaque;
}

/** Request with a fresh opaque, language JAVA, version V4_9_4, JSON serialization. */
export function createRequestCommand(
  code: number,
  extFields?: Record<string, ExtFieldValue> | null,
  body?: Buffer | null,
): RemotingCommand {
  return {
    code,
    language: 'JAVA',
    version: CURRENT_VERSION,
    opaque: nextOpaque(),
    flag: 0,
    remark: null,
    extFields: extFields ?? null,
    body: body ?? null,
    serializeTypeCurrentRPC: 0,
  };
}

/** Response to `request`: same opaque and serialize type, flag = response. */
export function createResponseCommand(
  request: RemotingCommand,
  code: number,
  remark?: string | null,
  extFields?: Record<string, ExtFieldValue> | null,
  body?: Buffer | null,
): RemotingCommand {
  return {
    code,
    language: 'JAVA',
    version: CURRENT_VERSION,
    opaque: request.opaque,
    flag: RPC_TYPE_RESPONSE,
    remark: remark ?? null,
    extFields: extFields ?? null,
    body: body ?? null,
    serializeTypeCurrentRPC: request.serializeTypeCurrentRPC,
  };
}

/** Flag bit 0. */
export function isResponse(cmd: RemotingCommand): boolean {
  return (cmd.flag & RPC_TYPE_RESPONSE) !== 0;
}

/** Flag bit 1. ali-ons never sets it, even for calls it treats as fire-and-forget. */
export function isOneway(cmd: RemotingCommand): boolean {
  return (cmd.flag & RPC_ONEWAY) !== 0;
}

/** Sets flag bit 1 (the caller expects no reply). Returns the same command. */
export function markOneway(cmd: RemotingCommand): RemotingCommand {
  cmd.flag |= RPC_ONEWAY;
  return cmd;
}
