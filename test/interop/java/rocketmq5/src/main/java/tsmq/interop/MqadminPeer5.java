package tsmq.interop;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.tools.command.MQAdminStartup;
import tsmq.interop.common.Json;

/**
 * Runs a sequence of Apache RocketMQ 5.3.3 mqadmin commands (MQAdminStartup.main0) in one JVM:
 *
 * <pre>
 *   MqadminPeer5 &lt;cmd&gt; &lt;args…&gt; -- &lt;cmd&gt; &lt;args…&gt; -- …
 * </pre>
 * A command {@code sleep <ms>} pauses. Each command prints one line
 * {"type":"mqadmin","cmd","args","output","ms"} with everything mqadmin wrote to stdout and
 * stderr (a failed command's stack trace included). Ends with {"type":"end"}.
 */
public final class MqadminPeer5 {
    /** No signing: main0 would otherwise look for $ROCKETMQ_HOME/conf/tools.yml. */
    private static final RPCHook NO_HOOK = new RPCHook() {
        @Override
        public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
        }

        @Override
        public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
        }
    };

    public static void main(String[] argv) throws Exception {
        List<List<String>> cmds = new ArrayList<>();
        List<String> cur = new ArrayList<>();
        for (String a : argv) {
            if (a.equals("--")) {
                if (!cur.isEmpty()) cmds.add(cur);
                cur = new ArrayList<>();
            } else {
                cur.add(a);
            }
        }
        if (!cur.isEmpty()) cmds.add(cur);
        for (List<String> c : cmds) {
            if (c.get(0).equals("sleep")) {
                Thread.sleep(Long.parseLong(c.get(1)));
                continue;
            }
            PrintStream real = System.out;
            PrintStream realErr = System.err;
            ByteArrayOutputStream captured = new ByteArrayOutputStream();
            long t0 = System.currentTimeMillis();
            try {
                PrintStream both = new PrintStream(captured, true, StandardCharsets.UTF_8);
                System.setOut(both);
                System.setErr(both);
                MQAdminStartup.main0(c.toArray(new String[0]), NO_HOOK);
            } catch (Throwable t) {
                captured.write(("peer caught: " + t).getBytes(StandardCharsets.UTF_8));
            } finally {
                System.setOut(real);
                System.setErr(realErr);
            }
            Json.obj()
                .put("type", "mqadmin")
                .put("cmd", c.get(0))
                .put("args", String.join(" ", c.subList(1, c.size())))
                .put("output", captured.toString(StandardCharsets.UTF_8))
                .put("ms", System.currentTimeMillis() - t0)
                .println();
        }
        Json.obj().put("type", "end").put("commands", Arrays.asList(argv).size()).println();
        System.exit(0);
    }
}
