/**
 * Check-back to remoting producers: CHECK_TRANSACTION_STATE (39) written to one live connection
 * of the half message's producer group (mirrors Apache `Broker2Client.checkProducerTransactionState`,
 * sent oneway).
 *
 * Header (`CheckTransactionStateRequestHeader`): tranStateTableOffset (half queue offset),
 * commitLogOffset (half record), msgId (UNIQ_KEY), transactionId (`__transactionId__`, else
 * UNIQ_KEY), offsetMsgId (the half record's offset message id), topic (real topic).
 * Body: the half message encoded as a CommitLog record (MessageDecoder.encode), with topic and
 * queue id restored to REAL_TOPIC / REAL_QID. The producer answers with END_TRANSACTION (37)
 * and fromTransactionCheck=true. Stand-in channels (gRPC producers registered under their topics,
 * src/grpc/client-registration.ts) are skipped: their check-back goes over Telemetry
 * (RecoverOrphanedTransactionCommand, the gRPC checker), so a group holding only those is declined.
 */
import type { RemotingChannel } from '../../remoting/processor/request-processor.js';
import { createRequestCommand, markOneway } from '../../remoting/protocol/commands.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { MessageConst } from '../../common/message/message-const.js';
import { encodeRecord, patchRecord } from '../../common/message/record-codec.js';
import type { CheckRequest, TransactionChecker } from './transactional-message-service.js';

/** Live connections of a producer group (e.g. a ProducerManager lookup). */
export type ProducerChannelLookup = (producerGroup: string) => RemotingChannel[];

export function remotingTransactionChecker(channelsOf: ProducerChannelLookup): TransactionChecker {
  let rr = 0;
  return (req: CheckRequest) => {
    if (!req.producerGroup) return false;
    const channels = channelsOf(req.producerGroup).filter((c) => !c.closed && !c.standIn);
    if (channels.length === 0) return false;
    const channel = channels[rr++ % channels.length]!;
    channel.send(checkTransactionStateCommand(req));
    return true;
  };
}

export function checkTransactionStateCommand(req: CheckRequest) {
  const m = req.message;
  const uniq = m.properties.get(MessageConst.UNIQ_KEY) ?? m.msgId;
  const body = encodeRecord({ ...m, storeHost: m.storeHost });
  patchRecord(body, 0, m.queueOffset, m.commitLogOffset, m.storeTimestamp);
  const cmd = createRequestCommand(
    RequestCode.CHECK_TRANSACTION_STATE,
    {
      tranStateTableOffset: String(req.halfQueueOffset),
      commitLogOffset: String(req.commitLogOffset),
      msgId: uniq,
      transactionId: m.properties.get(MessageConst.TRANSACTION_ID) ?? uniq,
      offsetMsgId: m.msgId,
      topic: m.topic,
    },
    body,
  );
  return markOneway(cmd);
}
