/**
 * QUERY_DATA_VERSION (322). extFields brokerName, brokerAddr, clusterName, brokerId; body the
 * broker's DataVersion JSON. Like Apache: when the version is unchanged the broker's
 * last-update time is refreshed (it counts as a heartbeat). Reply SUCCESS with extFields
 * `changed` (boolean) and, when the broker is known, the stored DataVersion JSON as body.
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getString } from '../../remoting/headers/header-fields.js';
import { encodeDataVersion, parseDataVersion } from '../route/route-json.js';
import type { NamesrvContext } from '../namesrv-context.js';

export function queryDataVersionProcessor(ctx: NamesrvContext): RequestHandler {
  return ({ request }) => {
    const brokerAddr = getString(request.extFields, 'brokerAddr');
    let dataVersion;
    try {
      dataVersion = parseDataVersion(JSON.parse((request.body ?? Buffer.from('null')).toString('utf8')));
    } catch (e) {
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `invalid DataVersion body: ${(e as Error).message}`);
    }
    const changed = ctx.routes.isBrokerTopicConfigChanged(brokerAddr, dataVersion);
    if (!changed) ctx.routes.updateBrokerInfoUpdateTimestamp(brokerAddr);
    const stored = ctx.routes.queryBrokerTopicConfig(brokerAddr);
    return createResponseCommand(request, ResponseCode.SUCCESS, null, { changed }, stored ? encodeDataVersion(stored) : null);
  };
}
