package tsmq.interop;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.rocketmq.tools.command.MQAdminStartup;
import tsmq.interop.common.Json;

/**
 * Apache RocketMQ 5.3.3 mqadmin signing the way an operator's install does: MQAdminStartup.main0
 * with no RPCHook, so mqadmin itself reads {@code $ROCKETMQ_HOME/conf/tools.yml} (accessKey,
 * secretKey) before each command. Run with {@code -Drocketmq.home.dir=<home>}.
 *
 * <pre>
 *   ToolsYmlMqadminPeer5 &lt;home&gt; tools &lt;ak&gt; &lt;sk&gt; -- &lt;cmd&gt; &lt;args…&gt; -- tools … -- …
 * </pre>
 * {@code tools ak sk} (re)writes &lt;home&gt;/conf/tools.yml. Each mqadmin command prints
 * {"type":"mqadmin","cmd","args","ak","output"} with all it wrote to stdout/stderr. Ends with "end".
 */
public final class ToolsYmlMqadminPeer5 {
    public static void main(String[] argv) throws Exception {
        Path tools = Paths.get(argv[0], "conf", "tools.yml");
        List<List<String>> cmds = new ArrayList<>();
        List<String> cur = new ArrayList<>();
        for (int i = 1; i < argv.length; i++) {
            if (argv[i].equals("--")) {
                if (!cur.isEmpty()) cmds.add(cur);
                cur = new ArrayList<>();
            } else {
                cur.add(argv[i]);
            }
        }
        if (!cur.isEmpty()) cmds.add(cur);
        String ak = null;
        for (List<String> c : cmds) {
            if (c.get(0).equals("tools")) {
                ak = c.get(1);
                Files.createDirectories(tools.getParent());
                Files.write(tools, ("accessKey: " + c.get(1) + "\nsecretKey: " + c.get(2) + "\n").getBytes(StandardCharsets.UTF_8));
                continue;
            }
            PrintStream real = System.out;
            PrintStream realErr = System.err;
            ByteArrayOutputStream captured = new ByteArrayOutputStream();
            try {
                PrintStream both = new PrintStream(captured, true, StandardCharsets.UTF_8);
                System.setOut(both);
                System.setErr(both);
                MQAdminStartup.main0(c.toArray(new String[0]), null);
            } catch (Throwable t) {
                captured.write(("peer caught: " + t).getBytes(StandardCharsets.UTF_8));
            } finally {
                System.setOut(real);
                System.setErr(realErr);
            }
            Json.obj().put("type", "mqadmin").put("cmd", c.get(0)).put("args", String.join(" ", c.subList(1, c.size())))
                .put("ak", ak).put("output", captured.toString(StandardCharsets.UTF_8)).println();
        }
        Json.obj().put("type", "end").println();
        System.exit(0);
    }
}
