/**
 * Broker configuration over the wire (mirror Apache `AdminBrokerProcessor`):
 *
 *   26 GET_BROKER_CONFIG → body Java Properties text "key=value\n" of every broker and store key
 *      (config-file/broker-properties.ts), header `version` = the config data version JSON.
 *   25 UPDATE_BROKER_CONFIG  body Properties text → applied (broker keys live, store keys at the
 *      next start) and persisted to <storePathRootDir>/config/broker.properties. A key of the
 *      black list → 16 NO_PERMISSION "Can not update config in black list."; a bad value → 1
 *      SYSTEM_ERROR with the reason and nothing changed. A change of brokerPermission bumps the
 *      topic data version so the broker re-registers at once with the new permission (Apache).
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import type { BrokerContext } from '../broker-context.js';
import { parsePropertiesText } from '../../common/config/properties-text.js';
import type { BrokerProperties } from '../config-file/broker-properties.js';

export class BrokerConfigProcessors {
  constructor(
    private readonly ctx: BrokerContext,
    private readonly properties: BrokerProperties,
  ) {}

  readonly getBrokerConfig: RequestHandler = ({ request }) => {
    const body = Buffer.from(this.properties.formatAll(), 'utf8');
    return createResponseCommand(request, ResponseCode.SUCCESS, null, { version: JSON.stringify(this.properties.dataVersion.toJSON()) }, body);
  };

  readonly updateBrokerConfig: RequestHandler = ({ channel, request }) => {
    if (!request.body || request.body.length === 0) return createResponseCommand(request, ResponseCode.SUCCESS, null);
    let props: Map<string, string>;
    try {
      props = parsePropertiesText(request.body.toString('utf8'));
    } catch (e) {
      // Apache: MixAll.string2Properties fails → SYSTEM_ERROR "string2Properties error"
      this.ctx.logger.warn(`UPDATE_BROKER_CONFIG from ${channel.remoteAddress}: ${(e as Error).message}`);
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'string2Properties error');
    }
    this.ctx.logger.info(`UPDATE_BROKER_CONFIG from ${channel.remoteAddress}: ${[...props].map(([k, v]) => `${k}=${v}`).join(', ')}`);
    let outcome;
    try {
      outcome = this.properties.update(props);
    } catch (e) {
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `persist broker config failed: ${(e as Error).message}`);
    }
    if (!outcome.ok) {
      return createResponseCommand(request, outcome.code === 'NO_PERMISSION' ? ResponseCode.NO_PERMISSION : ResponseCode.SYSTEM_ERROR, outcome.remark);
    }
    if (outcome.ignored.length > 0) this.ctx.logger.warn(`UPDATE_BROKER_CONFIG: unknown keys ignored: ${outcome.ignored.join(', ')}`);
    if (props.has('brokerPermission')) this.ctx.topicConfigManager.touch();
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  };
}
