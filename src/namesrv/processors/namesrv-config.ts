/**
 * GET_NAMESRV_CONFIG (319): SUCCESS with the configuration as Java Properties text
 * ("key=value\n"). UPDATE_NAMESRV_CONFIG (318): body Properties text (unparsable → 1 SYSTEM_ERROR "string2Properties error"); a black-listed key →
 * 16 NO_PERMISSION "Can not update config in black list."; otherwise SUCCESS (config/namesrv-config-table.ts).
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { parsePropertiesText } from '../../common/config/properties-text.js';
import type { NamesrvContext } from '../namesrv-context.js';
import { NamesrvConfigTable } from '../config/namesrv-config-table.js';

const EMPTY = new NamesrvConfigTable({});

export function getNamesrvConfigProcessor(ctx: NamesrvContext): RequestHandler {
  return ({ request }) => createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from((ctx.config ?? EMPTY).formatAll(), 'utf8'));
}

export function updateNamesrvConfigProcessor(ctx: NamesrvContext): RequestHandler {
  return ({ channel, request }) => {
    let props: Map<string, string>;
    try {
      props = parsePropertiesText((request.body ?? Buffer.alloc(0)).toString('utf8'));
    } catch {
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'string2Properties error'); // Apache's answer
    }
    const refusal = (ctx.config ?? EMPTY).update(props);
    if (refusal) return createResponseCommand(request, ResponseCode.NO_PERMISSION, refusal);
    ctx.logger.info(`UPDATE_NAMESRV_CONFIG from ${channel.remoteAddress}: ${[...props.keys()].join(', ')}`);
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  };
}
