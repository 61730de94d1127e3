/**
 * Constants of the CommitLog record layout (spec §1.1–§1.3, §1.11, §1.12). Re-exported by
 * record-codec.ts; kept separate so the parser and the checker share them without a cycle.
 */
import { MessageSysFlag } from './sysflag.js';

/** V1 magic `0xDAA320A7`: 1-byte (signed) topic length. */
export const MESSAGE_MAGIC_CODE_V1 = -626843481;
/** V2 magic `0xDAA320AB`: 2-byte topic length (topics longer than 127 bytes). */
export const MESSAGE_MAGIC_CODE_V2 = -626843477;
/** End-of-file filler magic `0xCBD43194`. */
export const BLANK_MAGIC_CODE = -875286124;
/** Size of the end-of-file filler header; a real record always leaves at least this much room. */
export const END_FILE_MIN_BLANK_LENGTH = 8;
/** PROPERTIES length is a signed short. */
export const MAX_PROPERTIES_LENGTH = 32767;
/** Longest topic any record may carry (broker rule, HookUtils). */
export const MAX_TOPIC_LENGTH = 255;

export const TOTALSIZE_POSITION = 0;
export const MAGIC_POSITION = 4;
export const BODY_CRC_POSITION = 8;
export const QUEUE_ID_POSITION = 12;
export const FLAG_POSITION = 16;
export const QUEUE_OFFSET_POSITION = 20;
export const PHY_POS_POSITION = 28;
export const SYSFLAG_POSITION = 36;
export const BORN_TIMESTAMP_POSITION = 40;
export const BORN_HOST_POSITION = 48;
/** STORETIMESTAMP position when the born host is IPv4 (68 when IPv6: use storeTimestampPosition). */
export const MESSAGE_STORE_TIMESTAMP_POSITION = 56;

/** Smallest V1 record (IPv4 hosts, empty body/topic/properties). */
export const MIN_RECORD_SIZE_V1 = 91;
/** Smallest V2 record (IPv4 hosts, empty body/topic/properties). */
export const MIN_RECORD_SIZE_V2 = 92;

/** Byte position of STORETIMESTAMP inside a record with this SYSFLAG: 56 or 68. */
export function storeTimestampPosition(sysFlag: number): number {
  return (sysFlag & MessageSysFlag.BORNHOST_V6_FLAG) !== 0 ? 68 : 56;
}
