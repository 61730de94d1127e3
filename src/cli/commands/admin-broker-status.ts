/**
 * `tsmq admin broker-status (-b <host:port> | -c <cluster> -n <namesrv>)`: a broker's runtime
 * statistics (mqadmin `brokerStatus`, request code GET_BROKER_RUNTIME_INFO = 28): every key of
 * the broker's KVTable sorted by name, one `key : value` line each (key padded to 32 columns as
 * mqadmin prints it); with -c, every broker of the cluster (masters and slaves, from the
 * nameserver's cluster info 106), each line prefixed by the broker address. `--json`: with -b
 * `{"brokerAddr","table":{key: value}}`, with -c an array of those. Values are the broker's
 * strings (rates are "r10 r60 r600" per second, sizes in bytes).
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { addressList, adminCommand, invokeAdmin, objectField, parseFastjson, printJson, successBody, timeoutOf, withCommonOptions, type CommonAdminOptions } from './admin-support.js';
import { allAddrsOfCluster, fetchClusterInfo } from './admin-nameserver.js';

export interface BrokerStatusOptions extends CommonAdminOptions {
  brokerAddr?: string;
  cluster?: string;
  namesrvAddr?: string;
}

/** The KVTable of GET_BROKER_RUNTIME_INFO (28) from `brokerAddr`, values as strings. @throws the broker's refusal or a transport error. */
export async function fetchRuntimeInfo(brokerAddr: string, timeoutMs: number): Promise<Record<string, string>> {
  const { addr, response } = await invokeAdmin([brokerAddr], RequestCode.GET_BROKER_RUNTIME_INFO, null, timeoutMs);
  const table = objectField(parseFastjson(successBody(addr, response).toString('utf8')), 'table');
  return Object.fromEntries(Object.entries(table).map(([k, v]) => [k, String(v)]));
}

/** `key : value` lines sorted by key (mqadmin `%-32s: %s`), prefixed by `%-24s ` of the address when `prefixAddr` is given. */
export function brokerStatusLines(table: Record<string, string>, prefixAddr?: string): string[] {
  return Object.keys(table)
    .sort()
    .map((k) => `${prefixAddr !== undefined ? `${prefixAddr.padEnd(24)} ` : ''}${k.padEnd(32)}: ${table[k]}`);
}

export async function runBrokerStatus(opts: BrokerStatusOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  if (opts.brokerAddr) {
    const [addr] = addressList(opts.brokerAddr, 'broker');
    const table = await fetchRuntimeInfo(addr!, timeoutMs);
    if (opts.json) printJson({ brokerAddr: addr, table });
    else for (const l of brokerStatusLines(table)) console.log(l);
    return;
  }
  if (!opts.cluster) throw new Error('give -b <broker address> or -c <cluster> (with -n <nameserver>)');
  if (!opts.namesrvAddr) throw new Error('-c needs -n <nameserver address> (or NAMESRV_ADDR)');
  const addrs = allAddrsOfCluster(await fetchClusterInfo(opts.namesrvAddr, timeoutMs), opts.cluster.trim());
  const out: Array<{ brokerAddr: string; table: Record<string, string> }> = [];
  for (const addr of addrs) out.push({ brokerAddr: addr, table: await fetchRuntimeInfo(addr, timeoutMs) });
  if (opts.json) printJson(out);
  else for (const b of out) for (const l of brokerStatusLines(b.table, b.brokerAddr)) console.log(l);
}

export function registerAdminBrokerStatus(program: Command): void {
  withCommonOptions(
    adminCommand(program)
      .command('broker-status')
      .description("a broker's runtime statistics (mqadmin brokerStatus, request code 28)")
      .option('-b, --broker-addr <host:port>', 'broker address')
      .option('-c, --cluster <cluster>', 'every broker of this cluster (needs -n)')
      .option('-n, --namesrv-addr <host:port>', 'nameserver address(es) for -c', process.env.NAMESRV_ADDR),
  ).action(runBrokerStatus);
}
