/**
 * Tells a consumer group's live remoting clients that its membership or subscriptions changed
 * (mirrors Apache `DefaultConsumerIdsChangeListener` on a CHANGE event + `Broker2Client
 * .notifyConsumerIdsChanged`): NOTIFY_CONSUMER_IDS_CHANGED (40), oneway, header
 * `consumerGroup`, no body, to every remaining client of the group. Java clients (4.x/5.x) and
 * ali-ons answer it by rebalancing at once instead of at their next periodic rebalance (20 s),
 * so a joining consumer gets its queues (and a 5.x `DefaultLitePullConsumer.subscribe` its first
 * messages) without that wait, and the others stop pulling the queues they gave away.
 *
 * Sent only when the group's `notifyConsumerIdsChangedEnable` is true (Apache's default; a group
 * without a config counts as true). Closed channels are skipped by their send().
 */
import { RequestCode } from '../../remoting/codes/request-code.js';
import { createRequestCommand, markOneway } from '../../remoting/protocol/commands.js';
import type { ClientChannelInfo } from './client-channel-table.js';

/** The group flag lookup (SubscriptionGroupManager.findSubscriptionGroupConfig). */
export type GroupNotifySetting = (group: string) => { notifyConsumerIdsChangedEnable: boolean } | undefined;

/** Called by the ConsumerManager with the group's clients after a change; returns how many were told. */
export type ConsumerIdsChangeListener = (group: string, remaining: readonly ClientChannelInfo[]) => number;

export function consumerIdsChangeNotifier(groupSetting: GroupNotifySetting): ConsumerIdsChangeListener {
  return (group, remaining) => {
    if (groupSetting(group)?.notifyConsumerIdsChangedEnable === false) return 0;
    for (const c of remaining) c.channel.send(markOneway(createRequestCommand(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, { consumerGroup: group }, null)));
    return remaining.length;
  };
}
