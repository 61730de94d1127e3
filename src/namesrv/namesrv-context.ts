/** What nameserver request processors share. */
import type { Logger } from '../common/logging/logger.js';
import type { KvConfigManager } from './kv/kv-config-manager.js';
import type { RouteInfoManager } from './route/route-info-manager.js';

export interface NamesrvContext {
  routes: RouteInfoManager;
  kv: KvConfigManager;
  logger: Logger;
}
