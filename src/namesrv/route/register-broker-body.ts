/**
 * Parser for the REGISTER_BROKER (103) request body, Apache's RegisterBrokerBody in JSON
 * (uncompressed) form:
 *
 *   {"topicConfigSerializeWrapper":{
 *      "topicConfigTable":{"<topic>":{"topicName","readQueueNums","writeQueueNums","perm",
 *                                     "topicFilterType","topicSysFlag","order","attributes"}},
 *      "dataVersion":{"stateVersion","timestamp","counter"}},
 *    "filterServerList":[]}
 *
 * A 5.x broker hosting static topics adds "topicQueueMappingInfoMap":{"<topic>":TopicQueueMappingInfo}
 * to the wrapper (Apache TopicConfigAndMappingSerializeWrapper); entries without a bname are refused.
 *
 * Missing TopicConfig numbers take Apache's TopicConfig defaults (16 read, 16 write queues,
 * perm 6, sysFlag 0); a missing topicName falls back to the map key.
 */
import type { TopicConfig, TopicConfigWrapper, TopicQueueMappingInfoJson } from './route-types.js';
import { num, parseDataVersion } from './route-json.js';

export interface RegisterBrokerBody {
  topicConfigWrapper: TopicConfigWrapper;
  filterServerList: string[];
}

/** Throws Error with a readable message on malformed input. */
export function parseRegisterBrokerBody(body: Buffer | null): RegisterBrokerBody {
  if (!body || body.length === 0) {
    return {
      topicConfigWrapper: { topicConfigTable: new Map(), dataVersion: { stateVersion: 0, timestamp: 0, counter: 0 } },
      filterServerList: [],
    };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (e) {
    throw new Error(`register broker body is not valid JSON: ${(e as Error).message}`);
  }
  const root = asObject(parsed, 'register broker body');
  const wrapper = asObject(root.topicConfigSerializeWrapper ?? {}, 'topicConfigSerializeWrapper');
  const table = asObject(wrapper.topicConfigTable ?? {}, 'topicConfigTable');
  const topicConfigTable = new Map<string, TopicConfig>();
  for (const [key, value] of Object.entries(table)) {
    const tc = asObject(value, `topicConfigTable[${key}]`);
    const topicName = typeof tc.topicName === 'string' && tc.topicName !== '' ? tc.topicName : key;
    topicConfigTable.set(topicName, {
      topicName,
      readQueueNums: num(tc.readQueueNums, 16),
      writeQueueNums: num(tc.writeQueueNums, 16),
      perm: num(tc.perm, 6),
      topicSysFlag: num(tc.topicSysFlag, 0),
    });
  }
  const dataVersion = wrapper.dataVersion === undefined || wrapper.dataVersion === null
    ? { stateVersion: 0, timestamp: 0, counter: 0 }
    : parseDataVersion(wrapper.dataVersion);
  const fsl = root.filterServerList;
  const filterServerList = Array.isArray(fsl) ? fsl.map((s) => String(s)) : [];
  const topicConfigWrapper: TopicConfigWrapper = { topicConfigTable, dataVersion };
  if (wrapper.topicQueueMappingInfoMap !== undefined && wrapper.topicQueueMappingInfoMap !== null) {
    const infos = new Map<string, TopicQueueMappingInfoJson>();
    for (const [topic, value] of Object.entries(asObject(wrapper.topicQueueMappingInfoMap, 'topicQueueMappingInfoMap'))) {
      const info = asObject(value, `topicQueueMappingInfoMap[${topic}]`);
      if (typeof info.bname !== 'string' || info.bname === '') throw new Error(`topicQueueMappingInfoMap[${topic}].bname is missing`);
      infos.set(topic, info as TopicQueueMappingInfoJson);
    }
    topicConfigWrapper.topicQueueMappingInfoMap = infos;
  }
  return { topicConfigWrapper, filterServerList };
}

function asObject(v: unknown, what: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${what} is not a JSON object`);
  return v as Record<string, unknown>;
}
