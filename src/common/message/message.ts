/**
 * Message model shared by the store, the broker and the codecs.
 *
 * Mirrors RocketMQ's `MessageExtBrokerInner` (what the broker hands the store) and
 * `MessageExt` (what comes back from the CommitLog). All offsets and timestamps are JS
 * numbers: physical offsets stay exact up to 2^53 bytes (8 PiB), timestamps are epoch ms.
 */

/** A host as stored in a CommitLog record: raw address bytes (4 = IPv4, 16 = IPv6) + port. */
export interface SocketAddress {
  /** 4 bytes (IPv4) or 16 bytes (IPv6), network order, as Java's InetAddress.getAddress(). */
  ip: Buffer;
  port: number;
}

/** What the broker asks the store to append (RocketMQ `MessageExtBrokerInner`). */
export interface MessageInner {
  topic: string;
  queueId: number;
  /** Opaque user flag (`Message.flag`), stored as is. */
  flag: number;
  /** Body exactly as received (possibly compressed by the client, see sysFlag bit 0). */
  body: Buffer;
  /** Properties in insertion order; serialized as `name\x01value\x02` pairs. */
  properties: Map<string, string>;
  /** MessageSysFlag bits (compressed, transaction type, IPv6 hosts...). */
  sysFlag: number;
  bornTimestamp: number;
  bornHost: SocketAddress;
  storeHost: SocketAddress;
  reconsumeTimes: number;
  /** Physical offset of the related half message for transaction commit/rollback records, else 0. */
  preparedTransactionOffset: number;
  /**
   * `encodeProperties(properties)`, when the sender already has it (the broker's batch path
   * builds it from the bytes the client sent, see batch-codec.ts `BatchPropertyCompletion`): the
   * record encoder then skips serialising the Map. Whoever changes `properties` after it is set
   * must set it to undefined (the put hooks do; not `delete`, which turns the message object into
   * a slow dictionary-mode object).
   */
  encodedProperties?: string;
  /**
   * More of the encoded properties, stored right after `encodedProperties` (the entries the
   * broker adds to a batch item's text: one shared string, so the item's text is not
   * concatenated and copied again). Read only together with `encodedProperties`.
   */
  encodedPropertiesTail?: string;
}

/** A message decoded from a CommitLog record (RocketMQ `MessageExt`). */
export interface MessageExt extends MessageInner {
  /** TOTALSIZE of the record in bytes. */
  storeSize: number;
  magicCode: number;
  /** CRC32 of the body & 0x7FFFFFFF, as stored. */
  bodyCrc: number;
  queueOffset: number;
  /** Physical offset of the record's first byte (PHYSICALOFFSET). */
  commitLogOffset: number;
  storeTimestamp: number;
  /** Offset message id (store host + physical offset, uppercase hex), see msgid.ts. */
  msgId: string;
}
