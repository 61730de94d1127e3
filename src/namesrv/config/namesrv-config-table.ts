/**
 * The nameserver's configuration as GET_NAMESRV_CONFIG (319) shows it and UPDATE_NAMESRV_CONFIG
 * (318) changes it (mirrors Apache `Configuration` registered with NamesrvConfig and
 * NettyServerConfig). Keys use Apache's names; values are strings.
 *
 * `update(props)`: a key in Apache's namesrv `configBlackList` (configBlackList,
 * configStorePath, kvConfigPath) refuses the whole update; unknown keys are ignored; known keys
 * are recorded. tsmq reads none of them after start (Apache's NamesrvConfig fields are also read
 * at start, except a few booleans tsmq does not have), so an update shows in 319 and nowhere else.
 */
import { formatPropertiesText } from '../../common/config/properties-text.js';

export const NAMESRV_CONFIG_BLACK_LIST = ['configBlackList', 'configStorePath', 'kvConfigPath'];

export class NamesrvConfigTable {
  private readonly values: Map<string, string>;

  constructor(initial: Record<string, string>) {
    this.values = new Map(Object.entries(initial));
  }

  /** Every key, sorted. */
  all(): Map<string, string> {
    return new Map([...this.values].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** Java Properties text, "key=value\n" per key (escaped where needed: formatPropertiesText). */
  formatAll(): string {
    return formatPropertiesText(this.all());
  }

  /** Records known keys; returns the refusal reason for a black-listed key, else null. */
  update(props: Map<string, string>): string | null {
    for (const k of props.keys()) if (NAMESRV_CONFIG_BLACK_LIST.includes(k)) return 'Can not update config in black list.';
    for (const [k, v] of props) if (this.values.has(k)) this.values.set(k, v);
    return null;
  }
}
