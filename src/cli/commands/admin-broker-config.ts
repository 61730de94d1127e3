/**
 * Broker configuration commands (mqadmin `getBrokerConfig` / `updateBrokerConfig`):
 *
 * - `get-broker-config (-b <host:port> | -c <cluster> -n <namesrv>)`: GET_BROKER_CONFIG (26),
 *   every broker and store key with its value, sorted by key, as `key<pad to 50>=  value` lines
 *   under a `============<addr>============` banner (with -c: `============Master: <addr>====…`
 *   per master and `============My Master: <m>=====Slave: <s>============` per slave, as
 *   mqadmin), then an empty line. `--json`: `[{"brokerAddr","config":{key: value}}]`.
 * - `update-broker-config (-b <host:port> | -c <cluster> [-a] -n <namesrv>) -k <key> -v <value>`:
 *   UPDATE_BROKER_CONFIG (25) with body `key=value\n` to the broker, or every master of the
 *   cluster (-a: slaves too); prints `update broker config success, <addr>` per broker. The
 *   broker applies broker keys at once and store keys at its next start, and persists the change
 *   (into its `-c` broker.conf, else config/broker.properties; config-file/broker-properties.ts). Apache's broker silently ignores an unknown key; this command
 *   reads the configuration back (26) and fails naming the key when the broker does not have it
 *   (nothing changed then). `--json`: `[{"brokerAddr","key","value"}]` (the value read back).
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { formatPropertyLine, parsePropertiesText } from '../../common/config/properties-text.js';
import { addressList, adminCommand, invokeAdmin, printJson, successBody, timeoutOf, withCommonOptions, type CommonAdminOptions } from './admin-support.js';
import { fetchClusterInfo, masterAddrsOfCluster, type ClusterInfo } from './admin-nameserver.js';

interface TargetOptions extends CommonAdminOptions {
  brokerAddr?: string;
  cluster?: string;
  namesrvAddr?: string;
}

export interface GetBrokerConfigOptions extends TargetOptions {}

export interface UpdateBrokerConfigOptions extends TargetOptions {
  key: string;
  value: string;
  updateAllBroker?: boolean;
}

/** GET_BROKER_CONFIG (26) of one broker as `key → value`. */
export async function fetchBrokerConfig(brokerAddr: string, timeoutMs: number): Promise<Map<string, string>> {
  const { addr, response } = await invokeAdmin([brokerAddr], RequestCode.GET_BROKER_CONFIG, null, timeoutMs);
  return parsePropertiesText(successBody(addr, response).toString('utf8'));
}

/** `key<pad 50>=  value` lines sorted by key (mqadmin's `%-50s=  %s`). */
export function brokerConfigLines(config: Map<string, string>): string[] {
  return [...config.keys()].sort().map((k) => `${k.padEnd(50)}=  ${config.get(k)}`);
}

/** Banner per address: `<addr>` alone (-b), or Master / My Master…Slave (-c). */
interface Target {
  addr: string;
  banner: string;
}

function clusterTargets(info: ClusterInfo, cluster: string, withSlaves: boolean): Target[] {
  const masters = new Set(masterAddrsOfCluster(info, cluster));
  if (!withSlaves) return [...masters].map((addr) => ({ addr, banner: `============Master: ${addr}============` }));
  const out: Target[] = [];
  for (const name of [...(info.clusterAddrTable[cluster] ?? [])].sort()) {
    const addrs = info.brokerAddrTable[name]?.brokerAddrs ?? {};
    const master = addrs['0'];
    if (master) out.push({ addr: master, banner: `============Master: ${master}============` });
    for (const [id, addr] of Object.entries(addrs).sort(([a], [b]) => Number(a) - Number(b))) {
      if (id !== '0') out.push({ addr, banner: `============My Master: ${master ?? 'NO_MASTER'}=====Slave: ${addr}============` });
    }
  }
  return out;
}

async function targetsOf(opts: TargetOptions, withSlaves: boolean, timeoutMs: number): Promise<Target[]> {
  if (opts.brokerAddr) {
    const [addr] = addressList(opts.brokerAddr, 'broker');
    return [{ addr: addr!, banner: `============${addr}============` }];
  }
  if (!opts.cluster) throw new Error('give -b <broker address> or -c <cluster> (with -n <nameserver>)');
  if (!opts.namesrvAddr) throw new Error('-c needs -n <nameserver address> (or NAMESRV_ADDR)');
  const info = await fetchClusterInfo(opts.namesrvAddr, timeoutMs);
  const targets = clusterTargets(info, opts.cluster.trim(), withSlaves);
  if (targets.length === 0) throw new Error(`cluster ${opts.cluster} has no broker with a master`);
  return targets;
}

export async function runGetBrokerConfig(opts: GetBrokerConfigOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  const targets = await targetsOf(opts, true, timeoutMs);
  const out: Array<{ brokerAddr: string; config: Map<string, string> }> = [];
  for (const t of targets) out.push({ brokerAddr: t.addr, config: await fetchBrokerConfig(t.addr, timeoutMs) });
  if (opts.json) {
    printJson(out.map((b) => ({ brokerAddr: b.brokerAddr, config: Object.fromEntries([...b.config].sort(([x], [y]) => (x < y ? -1 : 1))) })));
    return;
  }
  out.forEach((b, i) => {
    console.log(targets[i]!.banner);
    for (const l of brokerConfigLines(b.config)) console.log(l);
    console.log('');
  });
}

/** Checks -k/-v (both trimmed, as mqadmin): a key without spaces, `=`, `:`, `#` or `!`. @throws Error naming the option. */
export function configEntryOf(key: string, value: string): { key: string; value: string } {
  const k = key.trim();
  const v = value.trim();
  if (!/^[^\s=:#!]+$/.test(k)) throw new Error(`-k/--key must be a config key (no spaces, '=', ':', '#', '!'), got "${key}"`);
  return { key: k, value: v };
}

/**
 * The UPDATE_BROKER_CONFIG body of one key: Java Properties text escaped where the value needs it
 * (formatPropertyLine), so the broker reads back exactly `value`. mqadmin sends `key=value` raw,
 * which loses a backslash (`C:\data` arrives as `C:data`).
 */
export function updateBrokerConfigBody(key: string, value: string): Buffer {
  return Buffer.from(`${formatPropertyLine(key, value)}\n`, 'utf8');
}

export async function runUpdateBrokerConfig(opts: UpdateBrokerConfigOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  const { key, value } = configEntryOf(opts.key, opts.value);
  const targets = await targetsOf(opts, opts.updateAllBroker === true, timeoutMs);
  const results: Array<{ brokerAddr: string; key: string; value: string }> = [];
  for (const t of targets) {
    // Apache's broker ignores a key it does not have: refuse before sending anything
    const before = await fetchBrokerConfig(t.addr, timeoutMs);
    if (!before.has(key)) throw new Error(`broker ${t.addr} has no config key ${key} (keys are case-sensitive; get-broker-config lists them); nothing changed`);
    const { addr, response } = await invokeAdmin([t.addr], RequestCode.UPDATE_BROKER_CONFIG, null, timeoutMs, updateBrokerConfigBody(key, value));
    successBody(addr, response);
    const after = (await fetchBrokerConfig(addr, timeoutMs)).get(key) ?? '';
    results.push({ brokerAddr: addr, key, value: after });
    if (!opts.json) {
      console.log(`update broker config success, ${addr}`);
      if (after !== value) console.log(`note: ${addr} reports ${key}=${after}`);
    }
  }
  if (opts.json) printJson(results);
}

function withTargetOptions(cmd: Command, what: string): Command {
  return cmd
    .option('-b, --broker-addr <host:port>', `${what} this broker`)
    .option('-c, --cluster <cluster>', `${what} the brokers of this cluster (needs -n)`)
    .option('-n, --namesrv-addr <host:port>', 'nameserver address(es) for -c', process.env.NAMESRV_ADDR);
}

export function registerAdminBrokerConfig(program: Command): void {
  const admin = adminCommand(program);
  withCommonOptions(withTargetOptions(admin.command('get-broker-config').description("a broker's configuration, every key (mqadmin getBrokerConfig, request code 26)"), 'read')).action(runGetBrokerConfig);
  withCommonOptions(
    withTargetOptions(admin.command('update-broker-config').description("change one key of a broker's configuration (mqadmin updateBrokerConfig, request code 25)"), 'update')
      .option('-a, --update-all-broker', 'with -c: slaves too')
      .requiredOption('-k, --key <key>', 'config key')
      .requiredOption('-v, --value <value>', 'config value'),
  ).action(runUpdateBrokerConfig);
}
