/**
 * 2004 SET_COMMITLOG_READ_MODE (`mqadmin setCommitLogReadAheadMode -m 0|1`), answered as Apache
 * 5.3.3's AdminBrokerProcessor does:
 *
 * - header `READ_AHEAD_MODE`: 0 = MADV_NORMAL (read ahead, the default), 1 = MADV_RANDOM;
 * - no header fields at all → SYSTEM_ERROR "set commitlog readahead mode param error";
 * - a value that is not a Java int (missing, blank, "x") → SYSTEM_ERROR "set commitlog readahead mode failed";
 * - any other int → INVALID_PARAMETER (29) "set commitlog readahead mode param value error";
 * - 0 / 1 → the store key `dataReadAheadEnable` (store-config.ts, default true, always shown by
 *   GET_BROKER_CONFIG) becomes true / false (live, not persisted — a later updateBrokerConfig
 *   persists it with the rest, as Apache's Configuration does; updateBrokerConfig may also set it) and the reply is
 *   SUCCESS with remark "set commitlog readahead mode success, mode: <mode>" (the tool prints it).
 *
 * Apache also `madvise`s every mapped CommitLog file. tsmq reads the CommitLog with positional
 * reads (no mmap), so the kernel's own per-file read-ahead applies and the key has no effect on I/O.
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import type { BrokerProperties } from '../config-file/broker-properties.js';

/** The header field (Apache FIleReadaheadMode.READ_AHEAD_MODE). */
export const READ_AHEAD_MODE = 'READ_AHEAD_MODE';
/** Linux madvise advice values the request accepts. */
export const MADV_NORMAL = 0;
export const MADV_RANDOM = 1;

const JAVA_INT_TEXT = /^[+-]?\d+$/;

/** The 2004 handler; records `dataReadAheadEnable` in the broker properties. */
export function commitLogReadAheadHandler(properties: BrokerProperties): RequestHandler {
  return ({ request }) => {
    const ext = request.extFields;
    if (!ext) return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'set commitlog readahead mode param error');
    const text = ext[READ_AHEAD_MODE];
    const mode = typeof text === 'string' && JAVA_INT_TEXT.test(text) ? Number(text) : typeof text === 'number' && Number.isInteger(text) ? text : NaN;
    if (!Number.isInteger(mode) || mode < -2147483648 || mode > 2147483647) {
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'set commitlog readahead mode failed');
    }
    if (mode !== MADV_NORMAL && mode !== MADV_RANDOM) {
      return createResponseCommand(request, ResponseCode.INVALID_PARAMETER, 'set commitlog readahead mode param value error');
    }
    properties.setLive('dataReadAheadEnable', String(mode === MADV_NORMAL));
    return createResponseCommand(request, ResponseCode.SUCCESS, `set commitlog readahead mode success, mode: ${mode}`);
  };
}
