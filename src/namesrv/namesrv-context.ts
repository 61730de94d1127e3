/** What nameserver request processors share. */
import type { Logger } from '../common/logging/logger.js';
import type { KvConfigManager } from './kv/kv-config-manager.js';
import type { RouteInfoManager } from './route/route-info-manager.js';
import type { NamesrvConfigTable } from './config/namesrv-config-table.js';

export interface NamesrvContext {
  routes: RouteInfoManager;
  kv: KvConfigManager;
  logger: Logger;
  /** Configuration shown by GET_NAMESRV_CONFIG (absent in processor unit tests). */
  config?: NamesrvConfigTable;
}
