/**
 * Collects what the Apache Java client sent and got back across the client interop scenarios
 * ({"type":"rpc"} lines of ClientPeer's recording RPC hook, plus "request type N not supported"
 * answers to asynchronous calls, which the hook cannot see) and turns it into the gap list:
 * request codes tsmq answered with an error the client does not expect.
 */
import type { JavaRun } from './java-peers.js';

export interface RpcStat {
  code: number;
  sent: number;
  responses: Record<string, number>;
  remarks: string[];
  fields: string[];
  scenarios: string[];
}

/** Response codes that are normal answers for a request code (not gaps). */
const NORMAL: Record<number, number[]> = {
  11: [0, 19, 20, 21], // PULL_MESSAGE: found, not found, retry immediately, offset moved
  14: [0, 22], // QUERY_CONSUMER_OFFSET: QUERY_NOT_FOUND for a new group
  38: [0, 1], // GET_CONSUMER_LIST_BY_GROUP: SYSTEM_ERROR "no consumer for this group" as in Apache
  12: [0, 22], // QUERY_MESSAGE: QUERY_NOT_FOUND
  222: [0, 206], // INVOKE_BROKER_TO_RESET_OFFSET: CONSUMER_NOT_ONLINE when the group is offline, as in Apache
  // RESET_CONSUMER_CLIENT_OFFSET goes broker → client (oneway); the client's hook records it as an
  // incoming request whose processor returns no response (-1), which is what Apache's client does
  220: [-1],
  // NOTIFY_CONSUMER_IDS_CHANGED: broker → client (oneway) when a group's membership changes, as
  // Apache's broker sends it; the client rebalances at once and answers nothing (-1)
  40: [-1],
  // GET_ROUTEINFO_BY_TOPIC: TOPIC_NOT_EXIST for a topic not created yet, as Apache's nameserver;
  // the client then builds the route from TBW102's with its own defaultTopicQueueNums
  105: [0, 17],
};

export const REQUEST_NAMES: Record<number, string> = {
  10: 'SEND_MESSAGE', 11: 'PULL_MESSAGE', 12: 'QUERY_MESSAGE', 14: 'QUERY_CONSUMER_OFFSET', 15: 'UPDATE_CONSUMER_OFFSET',
  17: 'UPDATE_AND_CREATE_TOPIC', 29: 'SEARCH_OFFSET_BY_TIMESTAMP', 30: 'GET_MAX_OFFSET', 31: 'GET_MIN_OFFSET',
  32: 'GET_EARLIEST_MSG_STORETIME', 33: 'VIEW_MESSAGE_BY_ID', 34: 'HEART_BEAT', 35: 'UNREGISTER_CLIENT',
  36: 'CONSUMER_SEND_MSG_BACK', 38: 'GET_CONSUMER_LIST_BY_GROUP', 40: 'NOTIFY_CONSUMER_IDS_CHANGED', 41: 'LOCK_BATCH_MQ', 42: 'UNLOCK_BATCH_MQ', 46: 'CHECK_CLIENT_CONFIG',
  105: 'GET_ROUTEINFO_BY_TOPIC', 106: 'GET_BROKER_CLUSTER_INFO', 202: 'GET_TOPIC_STATS_INFO', 208: 'GET_CONSUME_STATS',
  212: 'RESET_CONSUMER_OFFSET_IN_BROKER', 220: 'RESET_CONSUMER_CLIENT_OFFSET', 222: 'INVOKE_BROKER_TO_RESET_OFFSET',
  310: 'SEND_MESSAGE_V2', 320: 'SEND_BATCH_MESSAGE',
};

export class ClientGaps {
  readonly stats = new Map<number, RpcStat>();
  /** Codes seen in "request type N not supported" log lines (async calls). */
  readonly unsupportedAsync = new Map<number, Set<string>>();

  add(scenario: string, run: JavaRun): void {
    for (const l of run.lines) {
      if (l.type !== 'rpc') continue;
      const code = l.code as number;
      let s = this.stats.get(code);
      if (!s) {
        s = { code, sent: 0, responses: {}, remarks: [], fields: [], scenarios: [] };
        this.stats.set(code, s);
      }
      s.sent += l.sent as number;
      for (const [rc, n] of Object.entries(l.responses as Record<string, number>)) s.responses[rc] = (s.responses[rc] ?? 0) + n;
      for (const r of l.remarks as string[]) if (!s.remarks.includes(r)) s.remarks.push(r);
      for (const f of l.fields as string[]) if (!s.fields.includes(f)) s.fields.push(f);
      if (!s.scenarios.includes(scenario)) s.scenarios.push(scenario);
    }
    for (const m of run.stderr.matchAll(/request type (\d+) not supported/g)) {
      const code = Number(m[1]);
      if (!this.unsupportedAsync.has(code)) this.unsupportedAsync.set(code, new Set());
      this.unsupportedAsync.get(code)!.add(scenario);
    }
  }

  /** One line per request code answered abnormally: code, name, header fields, what came back. */
  gaps(): string[] {
    const out: string[] = [];
    const codes = new Set([...this.stats.keys(), ...this.unsupportedAsync.keys()]);
    for (const code of [...codes].sort((a, b) => a - b)) {
      const s = this.stats.get(code);
      const bad = s ? Object.entries(s.responses).filter(([rc]) => !(NORMAL[code] ?? [0]).includes(Number(rc))) : [];
      const asyncUnsupported = this.unsupportedAsync.get(code);
      if (bad.length === 0 && !asyncUnsupported) continue;
      const name = REQUEST_NAMES[code] ?? '?';
      const answers = bad.map(([rc, n]) => `${n}× response ${rc}`).join(', ');
      const parts = [
        `request ${code} ${name}`,
        s ? `header fields [${s.fields.join(', ')}]` : '',
        answers,
        asyncUnsupported ? `async answer "request type ${code} not supported" (${[...asyncUnsupported].join(', ')})` : '',
        s && s.remarks.length ? `remarks ${JSON.stringify(s.remarks)}` : '',
        s ? `in ${s.scenarios.join(', ')}` : '',
      ].filter((x) => x !== '');
      out.push(parts.join('; '));
    }
    return out;
  }

  /** Table of everything the client sent (for docs/interop.md and diagnostics). */
  table(): string[] {
    return [...this.stats.values()]
      .sort((a, b) => a.code - b.code)
      .map((s) => `${s.code} ${REQUEST_NAMES[s.code] ?? '?'}: sent ${s.sent}, responses ${JSON.stringify(s.responses)}`);
  }
}
