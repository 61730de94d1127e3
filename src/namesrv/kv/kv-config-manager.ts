/**
 * In-memory namespace -> key -> value store (Apache's KVConfigManager, without the
 * kvConfig.json persistence). ORDER_TOPIC_CONFIG is the namespace returned to brokers on
 * registration.
 */
export const NAMESPACE_ORDER_TOPIC_CONFIG = 'ORDER_TOPIC_CONFIG';

export class KvConfigManager {
  private readonly table = new Map<string, Map<string, string>>();

  put(namespace: string, key: string, value: string): void {
    let ns = this.table.get(namespace);
    if (!ns) this.table.set(namespace, (ns = new Map()));
    ns.set(key, value);
  }

  get(namespace: string, key: string): string | null {
    return this.table.get(namespace)?.get(key) ?? null;
  }

  delete(namespace: string, key: string): void {
    const ns = this.table.get(namespace);
    if (!ns) return;
    ns.delete(key);
    if (ns.size === 0) this.table.delete(namespace);
  }

  /** Copy of one namespace, or null when it has no entries. */
  list(namespace: string): Map<string, string> | null {
    const ns = this.table.get(namespace);
    return ns && ns.size > 0 ? new Map(ns) : null;
  }
}
