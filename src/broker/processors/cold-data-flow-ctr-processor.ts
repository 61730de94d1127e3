/**
 * 2003 GET_COLD_DATA_FLOW_CTR_INFO (`mqadmin getColdDataFlowCtrInfo`), as Apache 5.3.3's
 * AdminBrokerProcessor answers it: SUCCESS with a JSON body of its ColdDataCgCtrService state
 *
 *   {"globalAcc":0,"cgColdReadThreshold":<bytes>,"configTable":{},"globalColdReadThreshold":<bytes>,"runtimeTable":{}}
 *
 * (keys in the order Apache's fastjson HashMap prints them). tsmq has no cold-data flow control
 * (Apache's `coldDataFlowControlEnable=false` default), so no consumer group is ever tracked:
 * `runtimeTable` (group → cold bytes read) and `configTable` (per-group thresholds) are empty and
 * `globalAcc` (cold bytes read in the current window) is 0. The two thresholds are the broker.conf
 * keys `cgColdReadThreshold` / `globalColdReadThreshold` (bytes; Apache's defaults 3 MiB / 100 MiB).
 * A threshold key that is not a whole number falls back to the default (the reply is informational).
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';

/** Apache BrokerConfig.cgColdReadThreshold default (bytes). */
export const DEFAULT_CG_COLD_READ_THRESHOLD_BYTES = 3 * 1024 * 1024;
/** Apache BrokerConfig.globalColdReadThreshold default (bytes). */
export const DEFAULT_GLOBAL_COLD_READ_THRESHOLD_BYTES = 100 * 1024 * 1024;

export interface ColdDataFlowCtrInfo {
  globalAcc: number;
  cgColdReadThreshold: number;
  configTable: Record<string, number>;
  globalColdReadThreshold: number;
  runtimeTable: Record<string, unknown>;
}

function wholeNumber(text: string | undefined, fallback: number): number {
  if (text === undefined || !/^\s*-?\d+\s*$/.test(text)) return fallback;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : fallback;
}

/** The reply body for the given broker keys (`allConfigs()` of the broker properties). */
export function coldDataFlowCtrInfo(config: ReadonlyMap<string, string>): ColdDataFlowCtrInfo {
  return {
    globalAcc: 0,
    cgColdReadThreshold: wholeNumber(config.get('cgColdReadThreshold'), DEFAULT_CG_COLD_READ_THRESHOLD_BYTES),
    configTable: {},
    globalColdReadThreshold: wholeNumber(config.get('globalColdReadThreshold'), DEFAULT_GLOBAL_COLD_READ_THRESHOLD_BYTES),
    runtimeTable: {},
  };
}

/** The 2003 handler; `config()` gives the broker's current keys. */
export function coldDataFlowCtrInfoHandler(config: () => ReadonlyMap<string, string>): RequestHandler {
  return ({ request }) => createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(JSON.stringify(coldDataFlowCtrInfo(config())), 'utf8'));
}
