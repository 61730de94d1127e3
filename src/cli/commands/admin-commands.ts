/**
 * The everyday `tsmq admin` commands (mqadmin equivalents over the remoting protocol), one file
 * per command or small family: update-topic (17), topic-list (206), topic-route (105),
 * topic-status (202), consumer-progress (208), cluster-list (106 + 28), broker-status (28),
 * get-/update-broker-config (26 / 25), update-/delete-sub-group (200 / 207), delete-topic
 * (215 + 216), consumer-/producer-connection (203 / 204), query-msg-by-key / -id / -offset
 * (12 / 33 / 11), print-msg (11), reset-offset-by-time (222, or 208 + 29 + 15), send-message
 * (310), consume-message (11), and the controller commands (admin-controller.ts: 1002,
 * 1005-1007). `delete-expired-commitlog` registers itself (admin-delete-expired.ts).
 */
import type { Command } from 'commander';
import { registerAdminUpdateTopic } from './admin-update-topic.js';
import { registerAdminTopicList } from './admin-topic-list.js';
import { registerAdminTopicRoute } from './admin-topic-route.js';
import { registerAdminTopicStatus } from './admin-topic-status.js';
import { registerAdminConsumerProgress } from './admin-consumer-progress.js';
import { registerAdminController } from './admin-controller.js';
import { registerAdminClusterList } from './admin-cluster-list.js';
import { registerAdminBrokerStatus } from './admin-broker-status.js';
import { registerAdminBrokerConfig } from './admin-broker-config.js';
import { registerAdminSubGroup } from './admin-sub-group.js';
import { registerAdminDeleteTopic } from './admin-delete-topic.js';
import { registerAdminConnections } from './admin-connections.js';
import { registerAdminQueryMsg } from './admin-query-msg.js';
import { registerAdminPrintMsg } from './admin-print-msg.js';
import { registerAdminResetOffset } from './admin-reset-offset.js';
import { registerAdminSendMessage } from './admin-send-message.js';
import { registerAdminConsumeMessage } from './admin-consume-message.js';

export function registerAdminToolCommands(program: Command): void {
  registerAdminUpdateTopic(program);
  registerAdminTopicList(program);
  registerAdminTopicRoute(program);
  registerAdminTopicStatus(program);
  registerAdminConsumerProgress(program);
  registerAdminController(program);
  registerAdminClusterList(program);
  registerAdminBrokerStatus(program);
  registerAdminBrokerConfig(program);
  registerAdminSubGroup(program);
  registerAdminDeleteTopic(program);
  registerAdminConnections(program);
  registerAdminQueryMsg(program);
  registerAdminPrintMsg(program);
  registerAdminResetOffset(program);
  registerAdminSendMessage(program);
  registerAdminConsumeMessage(program);
}
