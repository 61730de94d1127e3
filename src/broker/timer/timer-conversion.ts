/**
 * Conversion of a due timer-topic message into the message to store (Apache 5.3.3
 * `TimerMessageStore.convert` + `convertMessage`); shared by the on-time delivery path and the
 * prefetch (timer-prefetch.ts).
 */
import type { MessageExt, MessageInner } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';

/**
 * The message to put when a unit comes up, with the stored properties Apache 5.3.3 writes
 * (`convert` + `convertMessage`, checked against its TimerMessageStore in
 * test/interop/timer-compat-5.test.ts): the timer-topic message's properties plus
 * TIMER_ENQUEUE_MS (unless −1), TIMER_ROLL_TIMES + 1 for a roll, and TIMER_DEQUEUE_MS = now.
 * A roll stays on TIMER_TOPIC queue 0; anything else goes to REAL_TOPIC / REAL_QID. Apache clears
 * REAL_TOPIC / REAL_QID and sets WAIT=false only on its in-memory copy after serialising the
 * properties, so the stored message keeps REAL_TOPIC / REAL_QID and its original WAIT: so does
 * tsmq. Null when REAL_TOPIC / REAL_QID are missing or bad.
 */
export function convert(m: MessageExt, enqueueTime: string, roll: boolean, nowMs: number): MessageInner | null {
  const props = new Map(m.properties);
  if (enqueueTime !== '-1') props.set(MessageConst.TIMER_ENQUEUE_MS, enqueueTime);
  if (roll) props.set(MessageConst.TIMER_ROLL_TIMES, String((Number.parseInt(props.get(MessageConst.TIMER_ROLL_TIMES) ?? '0', 10) || 0) + 1));
  props.set(MessageConst.TIMER_DEQUEUE_MS, String(nowMs));
  let topic = m.topic;
  let queueId = m.queueId;
  if (!roll) {
    const real = props.get(MessageConst.REAL_TOPIC);
    const qid = props.get(MessageConst.REAL_QID);
    if (!real || qid === undefined || !/^\d+$/.test(qid)) return null;
    topic = real;
    queueId = Number(qid);
  }
  return {
    topic,
    queueId,
    flag: m.flag,
    body: m.body,
    properties: props,
    sysFlag: m.sysFlag,
    bornTimestamp: m.bornTimestamp,
    bornHost: m.bornHost,
    storeHost: m.storeHost,
    reconsumeTimes: m.reconsumeTimes,
    preparedTransactionOffset: 0,
  };
}
