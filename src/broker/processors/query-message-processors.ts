/**
 * QUERY_MESSAGE (12) and VIEW_MESSAGE_BY_ID (33) (mirror 4.9 `QueryMessageProcessor`).
 *   12: extFields topic, key, maxNum, beginTimestamp, endTimestamp, optional `_UNIQUE_KEY_QUERY`
 *       ("true" → maxNum = 32, Apache defaultQueryMaxNum). Reply extFields indexLastUpdateTimestamp,
 *       indexLastUpdatePhyoffset; body = matching records back to back; nothing found →
 *       22 QUERY_NOT_FOUND "can not find message, maybe time range not correct".
 *   33: extFields offset (physical); body = the record; none → 1 "can not find message by the offset, <offset>".
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getInt, getLong, getOptionalString, getString } from '../../remoting/headers/header-fields.js';
import type { BrokerContext } from '../broker-context.js';

/**
 * A time bound of QUERY_MESSAGE as a JS number: Java clients send Long.MAX_VALUE
 * (9223372036854775807) as "no end" (DefaultMQAdminExt.queryMessage(…, 0, Long.MAX_VALUE),
 * viewMessage(topic, uniqId)); integers beyond ±2^53 are clamped instead of rejected.
 */
export function getTimestampBound(ext: RemotingCommand['extFields'], name: string): number {
  const v = ext?.[name];
  if (typeof v === 'string' && /^\s*[+-]?\d{16,}\s*$/.test(v)) {
    const n = Number(v);
    if (n > Number.MAX_SAFE_INTEGER) return Number.MAX_SAFE_INTEGER;
    if (n < Number.MIN_SAFE_INTEGER) return Number.MIN_SAFE_INTEGER;
  }
  if (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v)) return v > 0 ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;
  return getLong(ext, name);
}

export const UNIQUE_MSG_QUERY_FLAG = '_UNIQUE_KEY_QUERY';
export const DEFAULT_QUERY_MAX_NUM = 32;

export class QueryMessageProcessors {
  constructor(private readonly ctx: BrokerContext) {}

  readonly queryMessage: RequestHandler = (rc) => this.processQuery(rc);
  readonly viewMessageById: RequestHandler = (rc) => this.processView(rc);

  async processQuery({ request }: RequestContext): Promise<RemotingCommand> {
    const ext = request.extFields;
    const unique = getOptionalString(ext, UNIQUE_MSG_QUERY_FLAG) === 'true';
    const maxNum = unique ? DEFAULT_QUERY_MAX_NUM : getInt(ext, 'maxNum');
    const result = await this.ctx.store.queryMessage(
      getString(ext, 'topic'),
      getString(ext, 'key'),
      maxNum,
      getTimestampBound(ext, 'beginTimestamp'),
      getTimestampBound(ext, 'endTimestamp'),
    );
    const header = { indexLastUpdateTimestamp: result.indexLastUpdateTimestamp, indexLastUpdatePhyoffset: result.indexLastUpdatePhyOffset };
    if (result.messages.length === 0) {
      return createResponseCommand(request, ResponseCode.QUERY_NOT_FOUND, 'can not find message, maybe time range not correct', header);
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null, header, Buffer.concat(result.messages));
  }

  async processView({ request }: RequestContext): Promise<RemotingCommand> {
    const offset = getLong(request.extFields, 'offset');
    const record = await this.ctx.store.selectOneMessageByOffset(offset);
    if (!record) return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `can not find message by the offset, ${offset}`);
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, record);
  }
}
