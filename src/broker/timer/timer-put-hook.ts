/**
 * The broker's put hook for timer messages (mirrors 5.x `HookUtils.handleScheduleMessage`,
 * `checkIfTimerMessage` and `transformTimerMessage`). Runs on every broker put (remoting single
 * and batch sends, END_TRANSACTION commits, gRPC sends, recall markers) before the delay-level
 * rewrite; the timer service's own re-puts bypass it.
 *
 * For a message whose transaction type is NOT/COMMIT and whose topic is not rmq_sys_wheel_timer:
 *  - DELAY > 0: TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS are removed, the delay level wins.
 *  - else, with TIMER_OUT_MS absent and one of the three present:
 *      timerWheelEnable=false                 → WHEEL_TIMER_NOT_ENABLE
 *      deliver time = now + TIMER_DELAY_SEC×1000, else now + TIMER_DELAY_MS, else TIMER_DELIVER_MS
 *      (Java Long.parseLong rules: optional sign and digits only; else WHEEL_TIMER_MSG_ILLEGAL)
 *      deliver time > now:
 *        more than timerMaxDelaySec ahead     → WHEEL_TIMER_MSG_ILLEGAL
 *        rounded DOWN to the precision, one precision less when already a multiple (the wheel
 *        delivers a slot once it has fully passed, so delivery is never early)
 *        slot over its congestion limit       → WHEEL_TIMER_FLOW_CONTROL
 *        TIMER_OUT_MS = that time, REAL_TOPIC, REAL_QID set; topic rmq_sys_wheel_timer, queue 0
 *      deliver time ≤ now: stored as a normal message, except a deletion marker
 *        (TIMER_DEL_UNIQKEY)                  → WHEEL_TIMER_MSG_ILLEGAL
 */
import type { Clock } from '../../common/time/clock.js';
import type { MessageInner } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { MessageSysFlag, getTransactionValue } from '../../common/message/sysflag.js';
import type { PutMessageResult } from '../../store/message-store.js';
import { delayLevelOf } from '../send/schedule-put-hook.js';
import type { TimerConfig } from './timer-config.js';

export const TIMER_TOPIC = 'rmq_sys_wheel_timer';

const JAVA_LONG = /^[+-]?\d{1,19}$/;

/** Java `Long.parseLong`, or null when it would throw (or the value is beyond what a JS number holds exactly). */
export function parseJavaLong(text: string | undefined): number | null {
  if (text === undefined || !JAVA_LONG.test(text)) return null;
  const v = Number(text);
  return Number.isSafeInteger(v) ? v : null;
}

export interface TimerPutHookOptions {
  config: Pick<TimerConfig, 'timerWheelEnable' | 'timerMaxDelaySec' | 'timerPrecisionMs' | 'timerCongestNumEachSlot'>;
  clock: Clock;
  /** Timers already in the slot of `deliverMs` (the wheel's count). */
  congestNumOf: (deliverMs: number) => number;
  random?: () => number;
}

export class TimerPutHook {
  private readonly random: () => number;

  constructor(private readonly opts: TimerPutHookOptions) {
    this.random = opts.random ?? Math.random;
  }

  /** Rewrites `msg` in place when it is a timer message; returns a refusal, or null to go on with the put. */
  apply(msg: MessageInner): PutMessageResult | null {
    const tranType = getTransactionValue(msg.sysFlag);
    if (tranType !== MessageSysFlag.TRANSACTION_NOT_TYPE && tranType !== MessageSysFlag.TRANSACTION_COMMIT_TYPE) return null;
    if (msg.topic === TIMER_TOPIC) return null;
    const p = msg.properties;
    if (delayLevelOf(msg) > 0) {
      msg.encodedProperties = undefined; // the properties change below (no delete: the message object keeps its shape)
      p.delete(MessageConst.TIMER_DELIVER_MS);
      p.delete(MessageConst.TIMER_DELAY_SEC);
      p.delete(MessageConst.TIMER_DELAY_MS);
      return null;
    }
    if (p.has(MessageConst.TIMER_OUT_MS)) return null;
    if (!p.has(MessageConst.TIMER_DELIVER_MS) && !p.has(MessageConst.TIMER_DELAY_MS) && !p.has(MessageConst.TIMER_DELAY_SEC)) return null;
    const cfg = this.opts.config;
    if (!cfg.timerWheelEnable) {
      return { status: 'WHEEL_TIMER_NOT_ENABLE', remark: `accurate timer message is not enabled, timerWheelEnable is ${cfg.timerWheelEnable}` };
    }
    const now = this.opts.clock.nowMs();
    let deliverMs: number | null;
    if (p.has(MessageConst.TIMER_DELAY_SEC)) {
      const sec = parseJavaLong(p.get(MessageConst.TIMER_DELAY_SEC));
      deliverMs = sec === null ? null : now + sec * 1000;
    } else if (p.has(MessageConst.TIMER_DELAY_MS)) {
      const ms = parseJavaLong(p.get(MessageConst.TIMER_DELAY_MS));
      deliverMs = ms === null ? null : now + ms;
    } else {
      deliverMs = parseJavaLong(p.get(MessageConst.TIMER_DELIVER_MS));
    }
    if (deliverMs === null || !Number.isSafeInteger(deliverMs)) return this.illegal();
    if (deliverMs > now) {
      if (deliverMs - now > cfg.timerMaxDelaySec * 1000) return this.illegal();
      const precision = cfg.timerPrecisionMs;
      deliverMs = deliverMs % precision === 0 ? deliverMs - precision : Math.floor(deliverMs / precision) * precision;
      if (this.isReject(deliverMs)) {
        const n = cfg.timerCongestNumEachSlot;
        return {
          status: 'WHEEL_TIMER_FLOW_CONTROL',
          remark: `timer message is under flow control, max num limit is ${n * 2} or the current value is greater than ${n} and less than ${n * 2}, trigger random flow control`,
        };
      }
      msg.encodedProperties = undefined; // the properties change below (no delete: the message object keeps its shape)
      p.set(MessageConst.TIMER_OUT_MS, String(deliverMs));
      p.set(MessageConst.REAL_TOPIC, msg.topic);
      p.set(MessageConst.REAL_QID, String(msg.queueId));
      msg.topic = TIMER_TOPIC;
      msg.queueId = 0;
    } else if (p.has(MessageConst.TIMER_DEL_UNIQKEY)) {
      return this.illegal();
    }
    return null;
  }

  /** Apache `TimerMessageStore.isReject`. */
  private isReject(deliverMs: number): boolean {
    const limit = this.opts.config.timerCongestNumEachSlot;
    const n = this.opts.congestNumOf(deliverMs);
    if (n <= limit) return false;
    if (n >= limit * 2) return true;
    return Math.floor(this.random() * 1000) > (1000 * (n - limit)) / (limit + 0.1);
  }

  private illegal(): PutMessageResult {
    return {
      status: 'WHEEL_TIMER_MSG_ILLEGAL',
      remark: `timer message illegal, the delay time should not be bigger than the max delay ${this.opts.config.timerMaxDelaySec * 1000}ms; or if set del msg, the delay time should be bigger than the current time`,
    };
  }
}
