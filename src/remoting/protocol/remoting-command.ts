/**
 * RemotingCommand: one RocketMQ remoting frame, decoded.
 *
 * Wire layout (remoting/.../RemotingCommand.java, client-protocols.md A1/C):
 *   int32 BE total length L (bytes after this field)
 *   int32 BE (serializeType << 24) | headerLength
 *   header (JSON UTF-8 when serializeType 0, ROCKETMQ binary when 1)
 *   body (L - 4 - headerLength bytes, may be empty)
 * Flag bit 0 = response, bit 1 = oneway.
 */
export type ExtFieldValue = string | number | boolean;

export interface RemotingCommand {
  code: number;
  /** Language name as in JSON ("JAVA", "NODE_JS"...). */
  language: string;
  version: number;
  opaque: number;
  flag: number;
  remark: string | null;
  /** Custom header fields. Values keep their JSON types (ali-ons sends numbers and booleans). */
  extFields: Record<string, ExtFieldValue> | null;
  body: Buffer | null;
  /** 0 = JSON, 1 = ROCKETMQ binary. A response is encoded in its request's type. */
  serializeTypeCurrentRPC: 0 | 1;
  /**
   * Not on the wire: run once by the connection that sends this command when its frame was handed
   * to the kernel (the socket's write callback) or failed to be (err set; also when the
   * connection is closed). The pull processor hands the reply body back to the store here.
   * Channels that do not write to a socket (in-memory test channels) may never call it.
   */
  onWritten?: (err?: Error | null) => void;
}

export const RPC_TYPE_RESPONSE = 1;
export const RPC_ONEWAY = 2;
