/**
 * SYSFLAG bits of a CommitLog record (mirrors `MessageSysFlag`) and of a pull request
 * (mirrors `PullSysFlag`). Layout in spec §1.6.
 */

export const MessageSysFlag = {
  /** Body compressed by the client. */
  COMPRESSED_FLAG: 0x1,
  /** Historical MULTI_TAG filter type marker. */
  MULTI_TAGS_FLAG: 0x2,
  /** Transaction type field (bits 2–3), extract with `sysFlag & TRANSACTION_TYPE_MASK`. */
  TRANSACTION_TYPE_MASK: 0xc,
  TRANSACTION_NOT_TYPE: 0,
  TRANSACTION_PREPARED_TYPE: 0x4,
  TRANSACTION_COMMIT_TYPE: 0x8,
  TRANSACTION_ROLLBACK_TYPE: 0xc,
  /** BORNHOST is 16 address bytes + port (20 bytes). */
  BORNHOST_V6_FLAG: 0x10,
  /** STOREHOSTADDRESS is 16 address bytes + port (20 bytes). */
  STOREHOSTADDRESS_V6_FLAG: 0x20,
  NEED_UNWRAP_FLAG: 0x40,
  INNER_BATCH_FLAG: 0x80,
  /** Compression type field (bits 8–10): 0x100 LZ4, 0x200 ZSTD, 0x300 ZLIB. */
  COMPRESSION_TYPE_MASK: 0x700,
  COMPRESSION_LZ4_TYPE: 0x100,
  COMPRESSION_ZSTD_TYPE: 0x200,
  COMPRESSION_ZLIB_TYPE: 0x300,
} as const;

/** The transaction type field of a sysFlag (`flag & 0xC`). */
export function getTransactionValue(sysFlag: number): number {
  return sysFlag & MessageSysFlag.TRANSACTION_TYPE_MASK;
}

/** Replaces the transaction type field of `sysFlag` with `type` (one of the TRANSACTION_* values). */
export function resetTransactionValue(sysFlag: number, type: number): number {
  return (sysFlag & ~MessageSysFlag.TRANSACTION_TYPE_MASK) | (type & MessageSysFlag.TRANSACTION_TYPE_MASK);
}

/** Byte length of the born host field (8 for IPv4, 20 for IPv6) given a record's sysFlag. */
export function bornHostLength(sysFlag: number): number {
  return (sysFlag & MessageSysFlag.BORNHOST_V6_FLAG) !== 0 ? 20 : 8;
}

/** Byte length of the store host field (8 for IPv4, 20 for IPv6) given a record's sysFlag. */
export function storeHostLength(sysFlag: number): number {
  return (sysFlag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) !== 0 ? 20 : 8;
}

/** Pull request sysFlag bits (mirrors `PullSysFlag`). */
export const PullSysFlag = {
  FLAG_COMMIT_OFFSET: 0x1,
  FLAG_SUSPEND: 0x2,
  FLAG_SUBSCRIPTION: 0x4,
  FLAG_CLASS_FILTER: 0x8,
  FLAG_LITE_PULL_MESSAGE: 0x10,
} as const;

export function hasCommitOffsetFlag(sysFlag: number): boolean {
  return (sysFlag & PullSysFlag.FLAG_COMMIT_OFFSET) !== 0;
}
export function hasSuspendFlag(sysFlag: number): boolean {
  return (sysFlag & PullSysFlag.FLAG_SUSPEND) !== 0;
}
export function hasSubscriptionFlag(sysFlag: number): boolean {
  return (sysFlag & PullSysFlag.FLAG_SUBSCRIPTION) !== 0;
}
export function hasClassFilterFlag(sysFlag: number): boolean {
  return (sysFlag & PullSysFlag.FLAG_CLASS_FILTER) !== 0;
}
export function hasLitePullFlag(sysFlag: number): boolean {
  return (sysFlag & PullSysFlag.FLAG_LITE_PULL_MESSAGE) !== 0;
}
/** Clears the commit-offset bit (RocketMQ `clearCommitOffsetFlag`, used when the broker is a slave). */
export function clearCommitOffsetFlag(sysFlag: number): number {
  return sysFlag & ~PullSysFlag.FLAG_COMMIT_OFFSET;
}
