/**
 * Cold-data read flow control admin requests, as Apache 5.3.3's AdminBrokerProcessor answers them
 * (`mqadmin getColdDataFlowCtrInfo` / `updateColdDataFlowCtrGroupConfig` /
 * `removeColdDataFlowCtrGroupConfig`):
 *
 * - 2001 UPDATE_COLD_DATA_FLOW_CTR_CONFIG: body = Java Properties text `group=thresholdBytes` per
 *   line. Each entry whose value is a whole number (Java `Long.valueOf`) is put into the per-group
 *   table; other entries are skipped (Apache logs and skips them). Always SUCCESS, also without a body.
 * - 2002 REMOVE_COLD_DATA_FLOW_CTR_CONFIG: body = the group name (UTF-8); removed from the
 *   table if present. Always SUCCESS.
 * - 2003 GET_COLD_DATA_FLOW_CTR_INFO: SUCCESS with a JSON body of the service state
 *
 *   {"globalAcc":0,"cgColdReadThreshold":<bytes>,"configTable":{<group>:<bytes>...},"globalColdReadThreshold":<bytes>,"runtimeTable":{}}
 *
 *   (keys in the order Apache's fastjson HashMap prints them).
 *
 * The per-group table lives in memory only, like Apache's (a restart empties it). tsmq has no
 * cold-data flow control itself (Apache's `coldDataFlowControlEnable=false` default), so the table
 * limits nothing, no consumer group is ever tracked: `runtimeTable` (group → cold bytes read) is
 * empty and `globalAcc` (cold bytes read in the current window) is 0. The two thresholds are the
 * broker.conf keys `cgColdReadThreshold` / `globalColdReadThreshold` (bytes; Apache's defaults
 * 3 MiB / 100 MiB); a threshold key that is not a whole number falls back to the default.
 * Differs from Apache: a per-group threshold beyond ±2^53 is skipped (Apache keeps any Java long).
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { parsePropertiesText } from '../../common/config/properties-text.js';

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

/** Java `Long.valueOf` accepts an optional sign and decimal digits, nothing else. */
function parseJavaLong(text: string | undefined): number | undefined {
  if (text === undefined || !/^[+-]?\d+$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

function wholeNumber(text: string | undefined, fallback: number): number {
  return parseJavaLong(text?.trim()) ?? fallback;
}

/** The admin-configured per-group cold read thresholds (Apache's `cgColdThresholdMapConfig`). */
export class ColdDataFlowCtrGroupTable {
  private readonly thresholdBytesByGroup = new Map<string, number>();

  /** Puts every `group=bytes` entry with a whole-number value; returns the groups skipped. */
  addOrUpdate(entries: ReadonlyMap<string, string>): string[] {
    const skipped: string[] = [];
    for (const [group, value] of entries) {
      const bytes = parseJavaLong(value);
      if (bytes === undefined) skipped.push(group);
      else this.thresholdBytesByGroup.set(group, bytes);
    }
    return skipped;
  }

  remove(group: string): void {
    this.thresholdBytesByGroup.delete(group);
  }

  toJSON(): Record<string, number> {
    return Object.fromEntries(this.thresholdBytesByGroup);
  }
}

/** The 2003 reply body for the given broker keys (`allConfigs()` of the broker properties). */
export function coldDataFlowCtrInfo(config: ReadonlyMap<string, string>, groups = new ColdDataFlowCtrGroupTable()): ColdDataFlowCtrInfo {
  return {
    globalAcc: 0,
    cgColdReadThreshold: wholeNumber(config.get('cgColdReadThreshold'), DEFAULT_CG_COLD_READ_THRESHOLD_BYTES),
    configTable: groups.toJSON(),
    globalColdReadThreshold: wholeNumber(config.get('globalColdReadThreshold'), DEFAULT_GLOBAL_COLD_READ_THRESHOLD_BYTES),
    runtimeTable: {},
  };
}

/** Handlers for 2001 / 2002 / 2003 over one group table; `config()` gives the broker's current keys. */
export class ColdDataFlowCtrProcessors {
  readonly groups = new ColdDataFlowCtrGroupTable();

  constructor(
    private readonly config: () => ReadonlyMap<string, string>,
    private readonly logger?: { warn(msg: string): void },
  ) {}

  readonly updateGroupConfig: RequestHandler = ({ request }) => {
    if (request.body && request.body.length > 0) {
      let props: Map<string, string>;
      try {
        props = parsePropertiesText(request.body.toString('utf8'));
      } catch (e) {
        // Apache (AdminBrokerProcessor): MixAll.string2Properties fails → SYSTEM_ERROR "string2Properties error"
        this.logger?.warn(`updateColdDataFlowCtrGroupConfig: ${(e as Error).message}`);
        return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'string2Properties error');
      }
      const skipped = this.groups.addOrUpdate(props);
      if (skipped.length > 0) this.logger?.warn(`updateColdDataFlowCtrGroupConfig: skipped entries without a whole-number threshold: ${skipped.join(', ')}`);
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  };

  readonly removeGroupConfig: RequestHandler = ({ request }) => {
    if (request.body && request.body.length > 0) this.groups.remove(request.body.toString('utf8'));
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  };

  readonly getInfo: RequestHandler = ({ request }) =>
    createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(JSON.stringify(coldDataFlowCtrInfo(this.config(), this.groups)), 'utf8'));
}
