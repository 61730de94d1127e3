/**
 * The everyday `tsmq admin` commands (mqadmin equivalents over the remoting protocol), one file
 * each: update-topic (17), topic-list (206), topic-route (105), topic-status (202),
 * consumer-progress (208), and the controller commands (admin-controller.ts: 1002, 1005-1007). `delete-expired-commitlog` registers itself (admin-delete-expired.ts).
 */
import type { Command } from 'commander';
import { registerAdminUpdateTopic } from './admin-update-topic.js';
import { registerAdminTopicList } from './admin-topic-list.js';
import { registerAdminTopicRoute } from './admin-topic-route.js';
import { registerAdminTopicStatus } from './admin-topic-status.js';
import { registerAdminConsumerProgress } from './admin-consumer-progress.js';
import { registerAdminController } from './admin-controller.js';

export function registerAdminToolCommands(program: Command): void {
  registerAdminUpdateTopic(program);
  registerAdminTopicList(program);
  registerAdminTopicRoute(program);
  registerAdminTopicStatus(program);
  registerAdminConsumerProgress(program);
  registerAdminController(program);
}
