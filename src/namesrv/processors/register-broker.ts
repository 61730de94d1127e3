/**
 * REGISTER_BROKER (103).
 * Request extFields: brokerName, brokerAddr, clusterName, haServerAddr, brokerId (long);
 * optional heartbeatTimeoutMillis (long), compressed (boolean, default false), bodyCrc32
 * (int, 0 = unchecked; else must equal crc32(body) & 0x7FFFFFFF).
 * Body: RegisterBrokerBody JSON (register-broker-body.ts). The compressed binary form is not
 * supported (SYSTEM_ERROR). A body above registerBrokerMaxBodyBytes or with more than
 * registerBrokerMaxTopicNums topics is refused with SYSTEM_ERROR (route/registration-limits.ts).
 * The body may carry every topic of the broker or only changed ones (Apache 5
 * registerIncrementBrokerData); RouteInfoManager.registerBroker merges per topic.
 * A body of exactly one topic from a broker id the nameserver has not registered (an increment
 * after a nameserver restart or broker expiry) → SYSTEM_ERROR "register broker failed", as
 * Apache 5.3.3 (the broker then registers in full).
 * Reply: SUCCESS; extFields haServerAddr and masterAddr (a slave's master; absent for a master);
 * body KVTable of the ORDER_TOPIC_CONFIG namespace, `{"table":{}}` when empty.
 */
import { bodyCrc } from '../../common/bytes/crc32.js';
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import type { ExtFieldValue } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getLong, getOptionalBoolean, getOptionalInt, getOptionalLong, getString } from '../../remoting/headers/header-fields.js';
import { NAMESPACE_ORDER_TOPIC_CONFIG } from '../kv/kv-config-manager.js';
import { encodeKvTable } from '../route/route-json.js';
import { parseRegisterBrokerBody } from '../route/register-broker-body.js';
import type { NamesrvContext } from '../namesrv-context.js';
import { RateLimitedLog } from '../../common/logging/rate-limited-log.js';
import { checkRegistrationBody, checkRegistrationTopics, DEFAULT_REGISTRATION_LIMITS, type RegistrationLimits } from '../route/registration-limits.js';

export function registerBrokerProcessor(ctx: NamesrvContext, limits: RegistrationLimits = DEFAULT_REGISTRATION_LIMITS): RequestHandler {
  const refusals = new RateLimitedLog(ctx.logger);
  return ({ request, channel }) => {
    const ext = request.extFields;
    const brokerName = getString(ext, 'brokerName');
    const brokerAddr = getString(ext, 'brokerAddr');
    const clusterName = getString(ext, 'clusterName');
    const haServerAddr = getString(ext, 'haServerAddr');
    const brokerId = getLong(ext, 'brokerId');
    const heartbeatTimeoutMs = getOptionalLong(ext, 'heartbeatTimeoutMillis');
    const compressed = getOptionalBoolean(ext, 'compressed') ?? false;
    const bodyCrc32 = getOptionalInt(ext, 'bodyCrc32') ?? 0;

    if (bodyCrc32 !== 0 && bodyCrc(request.body ?? Buffer.alloc(0)) !== bodyCrc32) {
      ctx.logger.warn(`receive registerBroker request,crc32 not match, from ${channel.remoteAddress}`);
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'crc32 not match');
    }
    if (compressed && request.body && request.body.length > 0) {
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'compressed register broker body is not supported');
    }
    const tooBig = checkRegistrationBody(request.body?.length ?? 0, limits);
    if (tooBig) {
      refusals.warn('too-big', `register broker ${brokerName} ${brokerAddr} from ${channel.remoteAddress} refused: ${tooBig}`);
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, tooBig);
    }
    let body;
    try {
      body = parseRegisterBrokerBody(request.body);
    } catch (e) {
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, (e as Error).message);
    }
    const tooMany = checkRegistrationTopics(body.topicConfigWrapper.topicConfigTable.size, limits);
    if (tooMany) {
      refusals.warn('too-many-topics', `register broker ${brokerName} ${brokerAddr} from ${channel.remoteAddress} refused: ${tooMany}`);
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, tooMany);
    }
    const result = ctx.routes.registerBroker({
      clusterName, brokerAddr, brokerName, brokerId, haServerAddr,
      topicConfigWrapper: body.topicConfigWrapper,
      filterServerList: body.filterServerList,
      channelId: channel.id,
      heartbeatTimeoutMs: heartbeatTimeoutMs !== undefined && heartbeatTimeoutMs > 0 ? heartbeatTimeoutMs : undefined,
    });
    if (result === null) return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'register broker failed');
    const replyExt: Record<string, ExtFieldValue> = {};
    if (result.haServerAddr !== null) replyExt.haServerAddr = result.haServerAddr;
    if (result.masterAddr !== null) replyExt.masterAddr = result.masterAddr;
    const kvBody = encodeKvTable(ctx.kv.list(NAMESPACE_ORDER_TOPIC_CONFIG));
    return createResponseCommand(request, ResponseCode.SUCCESS, null, replyExt, kvBody);
  };
}
