/**
 * Master-side answers a slave's timer sync asks for (mirrors Apache 5.3.3 `AdminBrokerProcessor`):
 *
 *   60 GET_TIMER_CHECK_POINT  body = the timer checkpoint as last written (config/timercheck), the
 *                             56 bytes of Apache `TimerCheckpoint.encode`: lastReadTimeMs,
 *                             lastTimerLogFlushPos, lastTimerQueueOffset, masterTimerQueueOffset,
 *                             dataVersion stateVersion, timestamp, counter (big-endian longs)
 *   61 GET_TIMER_METRICS      body = TimerMetrics JSON {"dataVersion":{...},"timingCount":{...}}
 *
 * No header fields; SUCCESS with a null remark. With timerWheelEnable=false both answer
 * SYSTEM_ERROR ("The checkpoint is null" / "The timer message store is null"), as Apache.
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { encodeTimerCheckpoint } from '../../store/timer/timer-checkpoint.js';
import type { TimerStore } from '../../store/timer/timer-store.js';
import type { TimerMetrics } from './timer-metrics.js';

/** Bytes of Apache's `TimerCheckpoint.encode` (the file itself is a 4096-byte page). */
export const TIMER_CHECKPOINT_WIRE_BYTES = 56;

export function buildTimerSyncHandlers(timerStore: TimerStore | null, metrics: TimerMetrics | null): Map<number, RequestHandler> {
  return new Map<number, RequestHandler>([
    [
      RequestCode.GET_TIMER_CHECK_POINT,
      ({ request }) =>
        timerStore
          ? createResponseCommand(request, ResponseCode.SUCCESS, null, null, encodeTimerCheckpoint(timerStore.checkpointFile.get()).subarray(0, TIMER_CHECKPOINT_WIRE_BYTES))
          : createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'The checkpoint is null'),
    ],
    [
      RequestCode.GET_TIMER_METRICS,
      ({ request }) =>
        metrics
          ? createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(JSON.stringify(metrics.encode()), 'utf8'))
          : createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'The timer message store is null'),
    ],
  ]);
}
