/**
 * A cheap plausibility check of a body whose sysFlag says COMPRESSED (0x1), before it is stored.
 *
 * Apache stores such a body as sent. Its Java client (4.9.8 and 5.x `MessageDecoder.decodes`)
 * decompresses every pulled body flagged COMPRESSED; when that throws (not compressed data, or an
 * unknown compression type 4-7 in sysFlag bits 8-10) it stops decoding the pull reply there, so
 * that message and every later one of the same reply are dropped while the consumer's next offset
 * moves past them: one careless producer makes a Java consumer skip other producers' messages.
 * tsmq refuses such a send instead (MESSAGE_ILLEGAL), with this function's reason.
 *
 * Checked, by the compression type of sysFlag (`CompressionType.findByValue`):
 *   0 (older clients) and 3 ZLIB: a zlib stream header (RFC 1950: CM = 8 deflate, CINFO <= 7,
 *     (CMF*256 + FLG) % 31 == 0, no preset dictionary);
 *   1 LZ4: the LZ4 frame magic 04 22 4D 18 (Apache's Lz4Compressor writes LZ4 frames);
 *   2 ZSTD: the zstd frame magic 28 B5 2F FD;
 *   4-7: refused (Apache's client throws "Unknown compress type value").
 * Only the header is looked at (constant time): a stream that is damaged further in still passes.
 * An empty body is not decompressed by the client and always passes.
 */
import { MessageSysFlag } from './sysflag.js';

const LZ4_FRAME_MAGIC = Buffer.from([0x04, 0x22, 0x4d, 0x18]);
const ZSTD_FRAME_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);

/** Why `body` cannot be what its sysFlag says (COMPRESSED and a compression type), or null. */
export function compressedBodyProblem(sysFlag: number, body: Buffer): string | null {
  if ((sysFlag & MessageSysFlag.COMPRESSED_FLAG) === 0 || body.length === 0) return null;
  const type = (sysFlag & MessageSysFlag.COMPRESSION_TYPE_MASK) >>> 8;
  switch (type) {
    case 0:
    case 3: {
      if (body.length < 2) return `sysFlag marks the body COMPRESSED (zlib) but it has only ${body.length} byte`;
      const cmf = body[0]!;
      const flg = body[1]!;
      const ok = (cmf & 0x0f) === 8 && cmf >>> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0 && (flg & 0x20) === 0;
      return ok ? null : `sysFlag marks the body COMPRESSED (zlib) but it does not start with a zlib header (first bytes ${hex(body)})`;
    }
    case 1:
      return startsWith(body, LZ4_FRAME_MAGIC) ? null : `sysFlag marks the body COMPRESSED (LZ4) but it does not start with the LZ4 frame magic (first bytes ${hex(body)})`;
    case 2:
      return startsWith(body, ZSTD_FRAME_MAGIC) ? null : `sysFlag marks the body COMPRESSED (ZSTD) but it does not start with the zstd frame magic (first bytes ${hex(body)})`;
    default:
      return `sysFlag marks the body COMPRESSED with unknown compression type ${type} (known: 1 LZ4, 2 ZSTD, 3 or 0 ZLIB)`;
  }
}

function startsWith(body: Buffer, magic: Buffer): boolean {
  return body.length >= magic.length && body.subarray(0, magic.length).equals(magic);
}

function hex(body: Buffer): string {
  return body.subarray(0, 4).toString('hex');
}
