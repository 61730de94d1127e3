/**
 * Recalling a timer message (mirrors Apache 5.x `RecallMessageProcessor`; shared by RECALL_MESSAGE
 * (370) and the gRPC RecallMessage RPC).
 *
 * Checks, in Apache's order and with its answers (remoting response codes):
 *   recallMessageEnable=false                       NO_PERMISSION "recall failed, operation is forbidden"
 *   brokerRole SLAVE                                SLAVE_NOT_AVAILABLE "recall failed, broker service not available"
 *   broker not writable and !allowRecallWhenBrokerNotWriteable  SERVICE_NOT_AVAILABLE (same text)
 *   topic unknown                                   TOPIC_NOT_EXIST "recall failed, the topic[<t>] not exist"
 *   handle undecodable                              ILLEGAL_OPERATION "recall handle is invalid"
 *   handle for another topic                        ILLEGAL_OPERATION "recall failed, topic not match"
 *   handle for another broker                       ILLEGAL_OPERATION "recall failed, broker service not available"
 *   handle time passed or beyond timerMaxDelaySec   ILLEGAL_OPERATION "recall failed, timestamp invalid"
 * Then a deletion marker goes through the broker put path (so the timer put hook files it into
 * the same slot): topic = handle topic, queue 0, body "0", TAGS _RECALL_TAG_,
 * TIMER_DEL_UNIQKEY = "<topic>+<uniqKey>", UNIQ_KEY = uniqKey, TIMER_DELIVER_MS = handle time,
 * BORN_TIMESTAMP, TRACE_CONTEXT "", PGROUP = producer group when given.
 * Stored → SUCCESS with msgId = uniqKey; otherwise SYSTEM_ERROR "recall failed, execute error".
 * A recall that arrives after the message was delivered changes nothing (as Apache).
 */
import type { SocketAddress } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { PermName } from '../broker-config.js';
import type { BrokerContext } from '../broker-context.js';
import type { TimerConfig } from './timer-config.js';
import { INVALID_RECALL_HANDLE, decodeRecallHandle } from './recall-handle.js';

export const RECALL_MESSAGE_TAG = '_RECALL_TAG_';

export interface RecallRequest {
  topic: string;
  recallHandle: string;
  producerGroup?: string;
  bornHost: SocketAddress;
}

export type RecallOutcome = { ok: true; msgId: string } | { ok: false; code: number; remark: string };

export class RecallMessageService {
  constructor(
    private readonly ctx: BrokerContext,
    private readonly config: Pick<TimerConfig, 'recallMessageEnable' | 'allowRecallWhenBrokerNotWriteable' | 'timerMaxDelaySec'>,
  ) {}

  async recall(req: RecallRequest): Promise<RecallOutcome> {
    const ctx = this.ctx;
    const fail = (code: number, remark: string): RecallOutcome => ({ ok: false, code, remark });
    if (!this.config.recallMessageEnable) return fail(ResponseCode.NO_PERMISSION, 'recall failed, operation is forbidden');
    if (ctx.config.brokerRole === 'SLAVE') return fail(ResponseCode.SLAVE_NOT_AVAILABLE, 'recall failed, broker service not available');
    if (!PermName.isWriteable(ctx.config.brokerPermission) && !this.config.allowRecallWhenBrokerNotWriteable) {
      return fail(ResponseCode.SERVICE_NOT_AVAILABLE, 'recall failed, broker service not available');
    }
    if (!ctx.topicConfigManager.selectTopicConfig(req.topic)) return fail(ResponseCode.TOPIC_NOT_EXIST, `recall failed, the topic[${req.topic}] not exist`);
    const handle = decodeRecallHandle(req.recallHandle);
    if (!handle) return fail(ResponseCode.ILLEGAL_OPERATION, INVALID_RECALL_HANDLE);
    if (handle.topic !== req.topic) return fail(ResponseCode.ILLEGAL_OPERATION, 'recall failed, topic not match');
    if (handle.brokerName !== ctx.config.brokerName) return fail(ResponseCode.ILLEGAL_OPERATION, 'recall failed, broker service not available');
    const timestamp = /^[+-]?\d+$/.test(handle.timestampStr) ? Number(handle.timestampStr) : -1;
    const now = ctx.clock.nowMs();
    const timeLeft = timestamp - now;
    if (timeLeft <= 0 || timeLeft >= this.config.timerMaxDelaySec * 1000) return fail(ResponseCode.ILLEGAL_OPERATION, 'recall failed, timestamp invalid');
    const properties = new Map<string, string>([
      [MessageConst.TAGS, RECALL_MESSAGE_TAG],
      [MessageConst.TIMER_DEL_UNIQKEY, `${handle.topic}+${handle.messageId}`],
      [MessageConst.UNIQ_KEY, handle.messageId],
      [MessageConst.TIMER_DELIVER_MS, handle.timestampStr],
      [MessageConst.BORN_TIMESTAMP, String(now)],
      [MessageConst.TRACE_CONTEXT, ''],
    ]);
    if (req.producerGroup) properties.set(MessageConst.PGROUP, req.producerGroup);
    const r = await ctx.putMessage({
      topic: handle.topic,
      queueId: 0,
      flag: 0,
      body: Buffer.from('0'),
      properties,
      sysFlag: 0,
      bornTimestamp: now,
      bornHost: req.bornHost,
      storeHost: ctx.storeHost,
      reconsumeTimes: 0,
      preparedTransactionOffset: 0,
    });
    if (r.appendResult && (r.status === 'PUT_OK' || r.status === 'FLUSH_DISK_TIMEOUT' || r.status === 'FLUSH_SLAVE_TIMEOUT' || r.status === 'SLAVE_NOT_AVAILABLE')) {
      return { ok: true, msgId: handle.messageId };
    }
    ctx.logger.warn(`recall of ${handle.messageId} on ${handle.topic} failed: ${r.status} ${r.remark ?? ''}`);
    return fail(ResponseCode.SYSTEM_ERROR, 'recall failed, execute error');
  }
}
