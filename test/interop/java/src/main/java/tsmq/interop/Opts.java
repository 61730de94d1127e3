package tsmq.interop;

import java.util.HashMap;
import java.util.Map;

/** key=value command-line options. */
final class Opts {
    private final Map<String, String> map = new HashMap<>();

    Opts(String[] args, int from) {
        for (int i = from; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq <= 0) throw new IllegalArgumentException("expected key=value, got " + args[i]);
            map.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
    }

    String str(String k, String def) {
        return map.getOrDefault(k, def);
    }

    String req(String k) {
        String v = map.get(k);
        if (v == null) throw new IllegalArgumentException("missing option " + k + "=...");
        return v;
    }

    int num(String k, int def) {
        return map.containsKey(k) ? Integer.parseInt(map.get(k)) : def;
    }

    long lng(String k, long def) {
        return map.containsKey(k) ? Long.parseLong(map.get(k)) : def;
    }
}
