/**
 * 908 RESET_MASTER_FLUSH_OFFSET (`mqadmin resetMasterFlushOffset -b <addr> -o <offset>`), answered
 * as Apache 5.3.3's AdminBrokerProcessor does:
 *
 * - on a master (`brokerId=0`) nothing is read or changed; SUCCESS;
 * - on a slave the header `masterFlushOffset` (bytes, a CommitLog physical offset; absent → no
 *   change) becomes the store checkpoint's `masterFlushedOffset` (written with the next
 *   checkpoint flush, field 24 of `checkpoint`); a malformed value is a header error
 *   (SYSTEM_ERROR with the decode reason, as Apache's decodeCommandCustomHeader); else SUCCESS.
 *
 * tsmq itself never reads `masterFlushedOffset` back (Apache uses it for controller-mode
 * truncation); it is kept so an Apache store opened on the same files sees the value.
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getOptionalLong } from '../../remoting/headers/header-fields.js';

/** The part of the store this needs (DefaultMessageStore has it; other stores may not). */
export interface MasterFlushOffsetTarget {
  checkpoint?: { masterFlushedOffset: number };
}

/** The 908 handler; `brokerId()` gives the broker's current id (0 = master). */
export function resetMasterFlushOffsetHandler(brokerId: () => number, store: MasterFlushOffsetTarget): RequestHandler {
  return ({ request }) => {
    if (brokerId() !== 0) {
      const offset = getOptionalLong(request.extFields, 'masterFlushOffset');
      if (offset !== undefined && store.checkpoint) store.checkpoint.masterFlushedOffset = offset;
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  };
}
