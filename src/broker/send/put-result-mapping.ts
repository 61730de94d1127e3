/**
 * Store put status → remoting response code (mirrors `SendMessageProcessor.handlePutMessageResult`).
 * The store's remark is used when it has one, else Apache's text.
 */
import { ResponseCode } from '../../remoting/codes/response-code.js';
import type { PutMessageResult, PutMessageStatus } from '../../store/message-store.js';

const MAPPING: Record<PutMessageStatus, { code: number; remark: string | null; stored: boolean }> = {
  PUT_OK: { code: ResponseCode.SUCCESS, remark: null, stored: true },
  FLUSH_DISK_TIMEOUT: { code: ResponseCode.FLUSH_DISK_TIMEOUT, remark: null, stored: true },
  FLUSH_SLAVE_TIMEOUT: { code: ResponseCode.FLUSH_SLAVE_TIMEOUT, remark: null, stored: true },
  SLAVE_NOT_AVAILABLE: { code: ResponseCode.SLAVE_NOT_AVAILABLE, remark: null, stored: true },
  CREATE_MAPPED_FILE_FAILED: { code: ResponseCode.SYSTEM_ERROR, remark: 'create mapped file failed, server is busy or broken.', stored: false },
  MESSAGE_ILLEGAL: {
    code: ResponseCode.MESSAGE_ILLEGAL,
    remark: 'the message is illegal, maybe msg body or properties length not matched. msg body length limit 4m, msg properties length limit 32k.',
    stored: false,
  },
  PROPERTIES_SIZE_EXCEEDED: {
    code: ResponseCode.MESSAGE_ILLEGAL,
    remark: 'the message is illegal, maybe msg body or properties length not matched. msg body length limit 4m, msg properties length limit 32k.',
    stored: false,
  },
  SERVICE_NOT_AVAILABLE: {
    code: ResponseCode.SERVICE_NOT_AVAILABLE,
    remark: "service not available now. It may be caused by one of the following reasons: the broker's disk is full, messages are put to the slave, message store has been shut down, etc.",
    stored: false,
  },
  OS_PAGE_CACHE_BUSY: { code: ResponseCode.SYSTEM_BUSY, remark: '[PC_SYNCHRONIZED]broker busy, start flow control for a while', stored: false },
  UNKNOWN_ERROR: { code: ResponseCode.SYSTEM_ERROR, remark: 'UNKNOWN_ERROR', stored: false },
  // The timer statuses always carry the remark Apache builds from the config (timer-put-hook.ts).
  WHEEL_TIMER_FLOW_CONTROL: { code: ResponseCode.SYSTEM_ERROR, remark: 'timer message is under flow control', stored: false },
  WHEEL_TIMER_MSG_ILLEGAL: { code: ResponseCode.MESSAGE_ILLEGAL, remark: 'timer message illegal', stored: false },
  WHEEL_TIMER_NOT_ENABLE: { code: ResponseCode.SYSTEM_ERROR, remark: 'accurate timer message is not enabled, timerWheelEnable is false', stored: false },
};

export interface MappedPutResult {
  code: number;
  remark: string | null;
  /** The message was appended (PUT_OK and the flush/replica timeouts): reply with msgId/queueOffset. */
  stored: boolean;
}

/** The answer of every stored PUT_OK (shared: the result is read, never changed). */
const STORED_OK: Readonly<MappedPutResult> = Object.freeze({ code: ResponseCode.SUCCESS, remark: null, stored: true });

export function mapPutResult(result: PutMessageResult): MappedPutResult {
  if (result.status === 'PUT_OK' && result.appendResult !== undefined) return STORED_OK;
  const m = MAPPING[result.status] ?? MAPPING.UNKNOWN_ERROR;
  const stored = m.stored && result.appendResult !== undefined;
  const remark = m.code === ResponseCode.SUCCESS ? null : (result.remark ?? m.remark);
  return { code: stored || !m.stored ? m.code : ResponseCode.SYSTEM_ERROR, remark, stored };
}
