package tsmq.interop.common;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The deterministic message recipe shared by the Java peers and the TypeScript tests
 * (test/interop/support/recipe.ts must produce exactly the same values; docs/interop.md
 * describes it). Message i of a run:
 *
 * <pre>
 *   topic      TOPICS[i % 3]                   queueId  (i / 3) % QUEUE_NUMS[i % 3]
 *   tags       none if i % 7 == 6, else "Tag" + "ABCD"[(i / 2) % 4]
 *   keys       "k" + i, plus " hot" + (i % 4) when i % 5 == 0
 *   UNIQ_KEY   "0A0000010000ABCD" + 16 upper-case hex digits of i
 *   seq        String(i);  pad = "x" repeated 1 + i % 9 times
 *   body       BODY_SIZES[i % 8] bytes, byte j = (i * 131 + j * 7 + (j >> 8)) & 0xff
 *   flag       i % 3                           reconsumeTimes  3 if i % 6 == 5 else 0
 *   bornTs     1700000000000 + i * 1000
 *   bornHost   i % 10 == 9 ? [fd00::i]:(50000 + i % 1000)  : 10.(i%7).(i%251).((i*13)%256):(40000 + i % 20000)
 *   storeHost  i % 29 == 28 ? [::1]:10911 : 127.0.0.1:10911
 *   with --long-topic (5.x only): i % 50 == 49 goes to LONG_TOPIC (140 chars), queue 0
 * </pre>
 * Property insertion order: TAGS, KEYS, UNIQ_KEY, seq, pad.
 */
public final class Recipe {
    public static final String[] TOPICS = {"IopTopicA", "IopTopicB", "IopTopicC"};
    public static final int[] QUEUE_NUMS = {4, 2, 1};
    public static final int[] BODY_SIZES = {0, 1, 17, 250, 1023, 4000, 9000, 30000};
    /** 140 chars: over 127, so a 5.x store writes it with the V2 magic (2-byte topic length). */
    public static final String LONG_TOPIC = "%RETRY%IopLongGroup" + "L".repeat(121);

    public final int i;
    /** With long topics, every message i % 50 == 49 goes to LONG_TOPIC, queue 0. */
    public final boolean longTopics;

    public Recipe(int i) {
        this(i, false);
    }

    public Recipe(int i, boolean longTopics) {
        this.i = i;
        this.longTopics = longTopics;
    }

    boolean isLong() {
        return longTopics && i % 50 == 49;
    }

    public String topic() {
        return isLong() ? LONG_TOPIC : TOPICS[i % 3];
    }

    public int queueId() {
        return isLong() ? 0 : (i / 3) % QUEUE_NUMS[i % 3];
    }

    public String tags() {
        return i % 7 == 6 ? null : "Tag" + "ABCD".charAt((i / 2) % 4);
    }

    public String keys() {
        return "k" + i + (i % 5 == 0 ? " hot" + (i % 4) : "");
    }

    public String uniqKey() {
        return "0A0000010000ABCD" + String.format("%016X", (long) i);
    }

    public byte[] body() {
        byte[] b = new byte[BODY_SIZES[i % 8]];
        for (int j = 0; j < b.length; j++) b[j] = (byte) ((i * 131 + j * 7 + (j >> 8)) & 0xff);
        return b;
    }

    public int flag() {
        return i % 3;
    }

    public int reconsumeTimes() {
        return i % 6 == 5 ? 3 : 0;
    }

    public long bornTimestamp() {
        return 1700000000000L + i * 1000L;
    }

    public InetSocketAddress bornHost() {
        try {
            if (i % 10 == 9) {
                byte[] a = new byte[16];
                a[0] = (byte) 0xfd;
                a[14] = (byte) (i >> 8);
                a[15] = (byte) i;
                return new InetSocketAddress(InetAddress.getByAddress(a), 50000 + i % 1000);
            }
            byte[] a = {10, (byte) (i % 7), (byte) (i % 251), (byte) ((i * 13) % 256)};
            return new InetSocketAddress(InetAddress.getByAddress(a), 40000 + i % 20000);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    public InetSocketAddress storeHost() {
        try {
            if (i % 29 == 28) {
                byte[] a = new byte[16];
                a[15] = 1;
                return new InetSocketAddress(InetAddress.getByAddress(a), 10911);
            }
            return new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), 10911);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Properties in insertion order (Apache serializes its HashMap in hash order anyway). */
    public Map<String, String> properties() {
        Map<String, String> p = new LinkedHashMap<>();
        if (tags() != null) p.put("TAGS", tags());
        p.put("KEYS", keys());
        p.put("UNIQ_KEY", uniqKey());
        p.put("seq", String.valueOf(i));
        p.put("pad", "x".repeat(1 + i % 9));
        return p;
    }

    /** "ip:port" the way the TS side prints hosts: dotted IPv4, or full lower-case hex IPv6 groups. */
    public static String hostString(InetSocketAddress a) {
        byte[] ip = a.getAddress().getAddress();
        StringBuilder sb = new StringBuilder();
        if (ip.length == 4) {
            for (int k = 0; k < 4; k++) {
                if (k > 0) sb.append('.');
                sb.append(ip[k] & 0xff);
            }
        } else {
            sb.append('[');
            for (int k = 0; k < 16; k += 2) {
                if (k > 0) sb.append(':');
                sb.append(Integer.toHexString(((ip[k] & 0xff) << 8) | (ip[k + 1] & 0xff)));
            }
            sb.append(']');
        }
        return sb.append(':').append(a.getPort()).toString();
    }
}
