/**
 * Request signatures of ACL 2.0, both fronts.
 *
 * Remoting (Apache AclClientRPCHook / DefaultAuthenticationContextBuilder): the client puts
 * `AccessKey` (and optional `SecurityToken`) into extFields, then signs
 *   content = UTF-8(concatenation of every extField value except `Signature`, in key order)
 *             followed by the body bytes
 *   Signature = Base64(HmacSHA1(key = secretKey UTF-8, content))
 * Keys are ordered as Java's TreeMap<String> orders them (UTF-16 code units, the same order as
 * JavaScript's default sort). Non-string JSON values (ali-ons sends numbers and booleans) are
 * taken in their text form. For requests of version <= V4_9_3 (400) the field
 * `_UNIQUE_KEY_QUERY` is left out, because those clients added it after signing.
 *
 * gRPC (rocketmq-clients Signature.java): metadata `x-mq-date-time: yyyyMMdd'T'HHmmss'Z'` and
 *   authorization: MQv2-HMAC-SHA1 Credential=<accessKey>, SignedHeaders=x-mq-date-time, Signature=<hex>
 * where hex = lowercase hex of HmacSHA1(secretKey, the x-mq-date-time value).
 */
import { createHmac } from 'node:crypto';
import type { ExtFieldValue, RemotingCommand } from '../remoting/protocol/remoting-command.js';

export const ACCESS_KEY = 'AccessKey';
export const SECRET_KEY = 'SecretKey';
export const SIGNATURE = 'Signature';
export const SECURITY_TOKEN = 'SecurityToken';
export const UNIQUE_MSG_QUERY_FLAG = '_UNIQUE_KEY_QUERY';
/** MQVersion.Version.V4_9_3.ordinal(). */
export const MQ_VERSION_V4_9_3 = 400;

export interface SessionCredentials {
  accessKey: string;
  secretKey: string;
  securityToken?: string;
}

/** Base64 HmacSHA1 of `content` under `secretKey` (Apache AclSigner.calSignature). */
export function hmacSha1Base64(content: Buffer, secretKey: string): string {
  return createHmac('sha1', Buffer.from(secretKey, 'utf8')).update(content).digest('base64');
}

/** The bytes a remoting request's signature covers (see the file comment). */
export function remotingSignContent(extFields: Record<string, ExtFieldValue>, body: Buffer | null, version: number): Buffer {
  const keys = Object.keys(extFields).sort();
  let text = '';
  for (const k of keys) {
    if (k === SIGNATURE) continue;
    if (k === UNIQUE_MSG_QUERY_FLAG && version <= MQ_VERSION_V4_9_3) continue;
    text += String(extFields[k]);
  }
  const head = Buffer.from(text, 'utf8');
  return body && body.length > 0 ? Buffer.concat([head, body]) : head;
}

/** Client side: adds AccessKey, SecurityToken and Signature to `cmd.extFields` like AclClientRPCHook. */
export function signRemotingCommand(cmd: RemotingCommand, credentials: SessionCredentials): RemotingCommand {
  const ext: Record<string, ExtFieldValue> = { ...(cmd.extFields ?? {}) };
  delete ext[SIGNATURE];
  ext[ACCESS_KEY] = credentials.accessKey;
  if (credentials.securityToken !== undefined) ext[SECURITY_TOKEN] = credentials.securityToken;
  ext[SIGNATURE] = hmacSha1Base64(remotingSignContent(ext, cmd.body, cmd.version), credentials.secretKey);
  cmd.extFields = ext;
  return cmd;
}

/** `x-mq-date-time` value for `date` (UTC, `20240102T030405Z`). */
export function grpcDateTime(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

/** The gRPC `authorization` metadata value a rocketmq-clients SDK sends. */
export function grpcAuthorization(credentials: SessionCredentials, dateTime: string): string {
  const hex = createHmac('sha1', Buffer.from(credentials.secretKey, 'utf8')).update(Buffer.from(dateTime, 'utf8')).digest('hex');
  return `MQv2-HMAC-SHA1 Credential=${credentials.accessKey}, SignedHeaders=x-mq-date-time, Signature=${hex}`;
}
