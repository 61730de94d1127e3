/**
 * The store's message-arrival notice (RocketMQ `NotifyMessageArrivingListener`), fanned out by
 * the broker to everyone waiting for new messages, in this order: the timer service (a put to
 * rmq_sys_wheel_timer wakes it), held pulls (long polling), parked pops, then the other fronts'
 * listeners (gRPC) in the order they were added.
 *
 * attach() is called by BrokerController's constructor; detach() in shutdown before the remoting
 * server stops, so nothing is woken while the broker closes.
 */
import type { MessageStore } from '../store/message-store.js';
import type { PullRequestHoldService } from './longpolling/pull-request-hold-service.js';
import type { PopService } from './pop/pop-service.js';
import { TIMER_TOPIC } from './timer/timer-put-hook.js';
import type { TimerMessageService } from './timer/timer-message-service.js';

export interface ArrivalTargets {
  timers: TimerMessageService | null;
  holdService: PullRequestHoldService;
  popService: PopService;
}

export class MessageArrivalFanout {
  private readonly listeners: Array<(topic: string, queueId: number) => void> = [];

  constructor(private readonly targets: ArrivalTargets) {}

  /** Another consumer front (gRPC) that wants to hear about dispatched messages. */
  add(listener: (topic: string, queueId: number) => void): void {
    this.listeners.push(listener);
  }

  /** Sets this fan-out as the store's (one) arrival listener. */
  attach(store: MessageStore): void {
    const { timers, holdService, popService } = this.targets;
    store.setMessageArrivingListener((topic, queueId, logicOffset, tagsCode, _ts, properties) => {
      if (topic === TIMER_TOPIC) timers?.wakeup();
      holdService.notifyMessageArriving(topic, queueId, logicOffset, tagsCode, properties);
      popService.notifyMessageArrived(topic);
      for (const l of this.listeners) l(topic, queueId);
    });
  }

  /** Clears the store's arrival listener. */
  detach(store: MessageStore): void {
    store.setMessageArrivingListener(null);
  }
}
