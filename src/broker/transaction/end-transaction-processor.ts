/**
 * END_TRANSACTION (37) on the remoting side (mirrors Apache `EndTransactionProcessor`).
 *
 * Header (`EndTransactionRequestHeader`): producerGroup, tranStateTableOffset (half queue
 * offset), commitLogOffset (half record), commitOrRollback (0 unknown, 8 commit, 12 rollback),
 * fromTransactionCheck, msgId (UNIQ_KEY), transactionId (optional).
 * commitOrRollback 0 (state unknown) only logs and sends no reply, as Apache does; so does any
 * request marked oneway (Java clients send 37 oneway). Otherwise: SUCCESS, or SYSTEM_ERROR with
 * the reason (no half message at the offset, group/offset mismatch, commit put failed).
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand, isOneway } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getInt, getLong, getOptionalBoolean, getOptionalString, getString } from '../../remoting/headers/header-fields.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import { MessageSysFlag } from '../../common/message/sysflag.js';
import type { TransactionalMessageService } from './transactional-message-service.js';

export class EndTransactionProcessor {
  private readonly logger: Logger;

  constructor(
    private readonly service: TransactionalMessageService,
    logger?: Logger,
  ) {
    this.logger = logger ?? silentLogger;
  }

  readonly handler: RequestHandler = (rc) => this.process(rc);

  async process({ channel, request }: RequestContext): Promise<RemotingCommand | null> {
    const ext = request.extFields;
    const producerGroup = getString(ext, 'producerGroup');
    const halfQueueOffset = getLong(ext, 'tranStateTableOffset');
    const commitLogOffset = getLong(ext, 'commitLogOffset');
    const type = getInt(ext, 'commitOrRollback');
    const fromCheck = getOptionalBoolean(ext, 'fromTransactionCheck') ?? false;
    const msgId = getOptionalString(ext, 'msgId');
    if (type === MessageSysFlag.TRANSACTION_NOT_TYPE) {
      this.logger.warn(`${channel.remoteAddress}: transaction ${msgId ?? commitLogOffset} state unknown${fromCheck ? ' (check)' : ''}; it will be checked again`);
      return null;
    }
    if (type !== MessageSysFlag.TRANSACTION_COMMIT_TYPE && type !== MessageSysFlag.TRANSACTION_ROLLBACK_TYPE) {
      return this.reply(request, ResponseCode.SYSTEM_ERROR, `commitOrRollback ${type} is not 0, 8 or 12`);
    }
    const result = await this.service.end({
      commitLogOffset,
      halfQueueOffset,
      producerGroup,
      ...(msgId ? { messageId: msgId } : {}),
      resolution: type === MessageSysFlag.TRANSACTION_COMMIT_TYPE ? 'COMMIT' : 'ROLLBACK',
      fromCheck,
    });
    if (result.ok) return this.reply(request, ResponseCode.SUCCESS, null);
    this.logger.warn(`${channel.remoteAddress}: end transaction failed: ${result.message}`);
    return this.reply(request, ResponseCode.SYSTEM_ERROR, result.message);
  }

  private reply(request: RemotingCommand, code: number, remark: string | null): RemotingCommand | null {
    return isOneway(request) ? null : createResponseCommand(request, code, remark);
  }
}
