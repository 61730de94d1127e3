package tsmq.interop.common;

import java.util.Base64;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;

/**
 * Minimal JSON writer for the interop peers (one object per output line). Values may be
 * null, String, Number, Boolean, byte[] (written as base64), Map (keys sorted) or Collection.
 */
public final class Json {
    private final StringBuilder sb = new StringBuilder("{");
    private boolean first = true;

    public static Json obj() {
        return new Json();
    }

    public Json put(String key, Object value) {
        if (!first) sb.append(',');
        first = false;
        writeString(sb, key);
        sb.append(':');
        writeValue(sb, value);
        return this;
    }

    @Override
    public String toString() {
        return sb + "}";
    }

    /** Prints the object as one line on stdout and flushes. */
    public void println() {
        synchronized (System.out) {
            System.out.println(this);
            System.out.flush();
        }
    }

    @SuppressWarnings("unchecked")
    static void writeValue(StringBuilder sb, Object v) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof Json) {
            sb.append(v.toString());
        } else if (v instanceof String) {
            writeString(sb, (String) v);
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            sb.append(Double.isFinite(d) ? Double.toString(d) : "null");
        } else if (v instanceof Number || v instanceof Boolean) {
            sb.append(v);
        } else if (v instanceof byte[]) {
            writeString(sb, Base64.getEncoder().encodeToString((byte[]) v));
        } else if (v instanceof Map) {
            sb.append('{');
            boolean f = true;
            for (Map.Entry<Object, Object> e : new TreeMap<Object, Object>((Map<Object, Object>) v).entrySet()) {
                if (!f) sb.append(',');
                f = false;
                writeString(sb, String.valueOf(e.getKey()));
                sb.append(':');
                writeValue(sb, e.getValue());
            }
            sb.append('}');
        } else if (v instanceof Collection) {
            sb.append('[');
            boolean f = true;
            for (Object o : (Collection<Object>) v) {
                if (!f) sb.append(',');
                f = false;
                writeValue(sb, o);
            }
            sb.append(']');
        } else if (v instanceof long[]) {
            sb.append('[');
            long[] a = (long[]) v;
            for (int i = 0; i < a.length; i++) {
                if (i > 0) sb.append(',');
                sb.append(a[i]);
            }
            sb.append(']');
        } else {
            writeString(sb, v.toString());
        }
    }

    static void writeString(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20 || c > 0x7e) sb.append(String.format("\\u%04x", (int) c));
                    else sb.append(c);
            }
        }
        sb.append('"');
    }
}
