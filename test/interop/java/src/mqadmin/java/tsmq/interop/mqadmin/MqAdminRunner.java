package tsmq.interop.mqadmin;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Permission;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import tsmq.interop.common.Json;

/**
 * Runs Apache's mqadmin (MQAdminStartup.main0, the same code path as the mqadmin script) for a
 * list of commands in ONE JVM, with a Java producer and push consumer kept alive in between
 * (so connection/status commands see live clients). Works with rocketmq-tools 4.9.8 and 5.3.3:
 * it only uses classes both versions keep in the same packages.
 *
 * Usage: MqAdminRunner <namesrvAddr> <steps file>. One step per line, fields separated by TAB:
 *   produce  VAR GROUP TOPIC COUNT TAG KEYPREFIX   sync sends; VAR.msgId/.offsetMsgId/.queueId/.queueOffset/.brokerName of the first
 *   consume  GROUP TOPIC EXPECT                    starts a push consumer (kept running), waits for EXPECT messages (20 s max); GROUP.clientId
 *   mqadmin  NAME ARG...                           one mqadmin command; ${VAR.x} and ${now} are substituted; -n is appended
 *   sleep    MS
 *   readfile ID PATH                               prints {"type":"file","id":ID,"content":...} (a broker file at that moment)
 * 5.x clients stop their NettyEventExecutor by waiting for its 3 s queue poll to time out, so
 * every DefaultMQAdminExt.shutdown() may take 3 s; a watcher interrupts that poll while the main
 * thread is inside NettyRemotingClient.shutdown (the executor treats the interrupt as a wake-up);
 * threads of the long-lived producer/consumer client are left alone.
 * Output: one JSON line per step: {"type":"sent"|"consumed"|"cmd",...}; a cmd line has
 * name, args, out (its stdout), err (its stderr, trimmed), exit (System.exit status if it called it), ms.
 */
public final class MqAdminRunner {
    private static final Map<String, String> VARS = new HashMap<>();
    private static final Map<String, DefaultMQProducer> PRODUCERS = new LinkedHashMap<>();
    private static final List<DefaultMQPushConsumer> CONSUMERS = new ArrayList<>();
    /** Threads of the producer's and consumer's client: never interrupted. */
    private static final java.util.Set<Thread> LONG_LIVED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private static void markLongLivedThreads() {
        LONG_LIVED.addAll(Thread.getAllStackTraces().keySet());
    }

    private static volatile boolean EXITING = false;

    /** Thrown instead of exiting the JVM when a sub command calls System.exit. */
    static final class ExitTrap extends SecurityException {
        final int status;

        ExitTrap(int status) {
            super("System.exit(" + status + ")");
            this.status = status;
        }
    }

    public static void main(String[] args) throws Exception {
        String namesrv = args[0];
        Path home = Files.createTempDirectory("tsmq-mqadmin-home");
        Files.createDirectories(home.resolve("conf"));
        // 4.9.x loads ${ROCKETMQ_HOME}/conf/logback_tools.xml before every command: stderr, warnings only.
        Files.writeString(home.resolve("conf/logback_tools.xml"),
            "<configuration><appender name=\"ERR\" class=\"ch.qos.logback.core.ConsoleAppender\"><target>System.err</target>"
                + "<encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{20} - %msg%n</pattern></encoder></appender>"
                + "<root level=\"WARN\"><appender-ref ref=\"ERR\"/></root></configuration>");
        System.setProperty("rocketmq.home.dir", home.toString());
        System.setProperty("rocketmq.namesrv.addr", namesrv);
        VARS.put("namesrv", namesrv);
        installExitTrap();
        startShutdownNudger(Thread.currentThread());
        PrintStream realOut = System.out;
        PrintStream realErr = System.err;
        try {
            for (String line : Files.readAllLines(Path.of(args[1]), StandardCharsets.UTF_8)) {
                if (line.isBlank()) continue;
                String[] f = line.split("\t");
                switch (f[0]) {
                    case "produce" -> produce(namesrv, f);
                    case "consume" -> consume(namesrv, f);
                    case "sleep" -> Thread.sleep(Long.parseLong(f[1]));
                    case "readfile" -> Json.obj().put("type", "file").put("id", f[1])
                        .put("content", Files.exists(Path.of(f[2])) ? Files.readString(Path.of(f[2])) : null).println();
                    case "mqadmin" -> mqadmin(namesrv, Arrays.copyOfRange(f, 1, f.length), realOut, realErr);
                    case "statsdata" -> statsData(namesrv, f);
                    case "readurl" -> Json.obj().put("type", "file").put("id", f[1]).put("content", readUrl(f[2])).println();
                    default -> throw new IllegalArgumentException("unknown step " + f[0]);
                }
            }
        } finally {
            // The clients are not shut down: 5.x takes ~16 s for it (3 s executor waits); halting
            // just drops their connections, which the broker handles like a crashed client.
            deleteTree(home.toFile());
        }
        EXITING = true;
        removeExitTrap();
        Runtime.getRuntime().halt(0);
    }

    @SuppressWarnings("removal")
    private static void removeExitTrap() {
        try {
            System.setSecurityManager(null);
        } catch (UnsupportedOperationException e) {
            // never installed
        }
    }

    private static void startShutdownNudger(Thread main) {
        Thread t = new Thread(() -> {
            while (true) {
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
                boolean inShutdown = false;
                for (StackTraceElement e : main.getStackTrace()) {
                    if (e.getClassName().endsWith("NettyRemotingClient") && e.getMethodName().equals("shutdown")) {
                        inShutdown = true;
                        break;
                    }
                }
                if (!inShutdown) continue;
                for (Thread other : Thread.getAllStackTraces().keySet()) {
                    if (other.getName().startsWith("NettyEventExecutor") && !LONG_LIVED.contains(other)) other.interrupt();
                }
            }
        }, "mqadmin-runner-shutdown-nudger");
        t.setDaemon(true);
        t.start();
    }

    @SuppressWarnings("removal")
    private static void installExitTrap() {
        try {
            System.setSecurityManager(new SecurityManager() {
                @Override
                public void checkPermission(Permission perm) {
                }

                @Override
                public void checkPermission(Permission perm, Object context) {
                }

                @Override
                public void checkExit(int status) {
                    if (!EXITING) throw new ExitTrap(status);
                }
            });
        } catch (UnsupportedOperationException e) {
            System.err.println("no SecurityManager: a sub command calling System.exit ends the run");
        }
    }

    private static void produce(String namesrv, String[] f) throws Exception {
        String var = f[1];
        String group = f[2];
        String topic = f[3];
        int count = Integer.parseInt(f[4]);
        String tag = f[5];
        String keyPrefix = f[6];
        DefaultMQProducer p = PRODUCERS.get(group);
        if (p == null) {
            p = new DefaultMQProducer(group);
            p.setNamesrvAddr(namesrv);
            // the first producer shares the consumer's client instance; later groups get their own
            // (5.x: the consumer's client is busy for 10 s after a RESET_CONSUMER_CLIENT_OFFSET)
            p.setInstanceName(PRODUCERS.isEmpty() ? "mqadmin-runner" : "mqadmin-runner-" + group);
            p.setSendMsgTimeout(5000);
            p.start();
            PRODUCERS.put(group, p);
            markLongLivedThreads();
        }
        int ok = 0;
        long started = System.currentTimeMillis();
        for (int i = 0; i < count; i++) {
            Message m = new Message(topic, tag, keyPrefix + "-" + i, ("body-" + keyPrefix + "-" + i).getBytes(StandardCharsets.UTF_8));
            SendResult r = p.send(m);
            if (r.getSendStatus().name().equals("SEND_OK")) ok++;
            if (i == 0) {
                VARS.put(var + ".msgId", r.getMsgId());
                VARS.put(var + ".offsetMsgId", r.getOffsetMsgId());
                VARS.put(var + ".queueId", String.valueOf(r.getMessageQueue().getQueueId()));
                VARS.put(var + ".queueOffset", String.valueOf(r.getQueueOffset()));
                VARS.put(var + ".brokerName", r.getMessageQueue().getBrokerName());
            }
        }
        Json.obj().put("type", "sent").put("var", var).put("topic", topic).put("count", count).put("ok", ok)
            .put("msgId", VARS.get(var + ".msgId")).put("offsetMsgId", VARS.get(var + ".offsetMsgId"))
            .put("queueId", VARS.get(var + ".queueId")).put("queueOffset", VARS.get(var + ".queueOffset"))
            .put("ms", System.currentTimeMillis() - started).println();
    }

    private static DefaultMQAdminExt statsAdmin;

    /** The body of an HTTP GET (e.g. the broker's Prometheus endpoint while this JVM's clients are connected), or null. */
    private static String readUrl(String url) {
        try (var in = new java.net.URL(url).openStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (Exception e) {
            return null;
        }
    }

    /**
     * `statsdata id brokerAddr statsName statsKey`: DefaultMQAdminExt.viewBrokerStatsData (request
     * 315, the admin API behind statsAll; mqadmin has no sub command for a single item). Prints
     * the minute/hour/day figures, or the refusal's message.
     */
    private static void statsData(String namesrv, String[] f) {
        Json j = Json.obj().put("type", "statsdata").put("id", f[1]);
        try {
            if (statsAdmin == null) {
                statsAdmin = new DefaultMQAdminExt(10_000);
                statsAdmin.setNamesrvAddr(namesrv);
                statsAdmin.setInstanceName("mqadmin-runner-stats");
                statsAdmin.start();
                markLongLivedThreads();
            }
            var d = statsAdmin.viewBrokerStatsData(f[2], f[3], f[4]);
            j.put("ok", true)
                .put("minuteSum", d.getStatsMinute().getSum()).put("minuteTps", d.getStatsMinute().getTps())
                .put("hourSum", d.getStatsHour().getSum()).put("daySum", d.getStatsDay().getSum());
        } catch (Exception e) {
            j.put("ok", false).put("error", String.valueOf(e.getMessage()));
        }
        j.println();
    }

    private static void consume(String namesrv, String[] f) throws Exception {
        String group = f[1];
        String topic = f[2];
        int expect = Integer.parseInt(f[3]);
        AtomicInteger got = new AtomicInteger();
        long started = System.currentTimeMillis();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(namesrv);
        c.setInstanceName("mqadmin-runner");
        c.subscribe(topic, "*");
        c.setConsumeFromWhere(org.apache.rocketmq.common.consumer.ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setPersistConsumerOffsetInterval(1000);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
            got.addAndGet(msgs.size());
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        CONSUMERS.add(c);
        markLongLivedThreads();
        VARS.put(group + ".clientId", c.buildMQClientId());
        long deadline = System.currentTimeMillis() + 20_000;
        while (got.get() < expect && System.currentTimeMillis() < deadline) Thread.sleep(50);
        // commit the consumed offsets now (the client would within persistConsumerOffsetInterval)
        Thread.sleep(300);
        c.getDefaultMQPushConsumerImpl().persistConsumerOffset();
        Thread.sleep(300);
        Json.obj().put("type", "consumed").put("group", group).put("topic", topic).put("count", got.get()).put("ms", System.currentTimeMillis() - started).println();
    }

    private static final Pattern VAR = Pattern.compile("\\$\\{([A-Za-z0-9_.]+)}");

    private static String subst(String s) {
        Matcher m = VAR.matcher(s);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String name = m.group(1);
            String v = name.equals("now") ? String.valueOf(System.currentTimeMillis()) : VARS.getOrDefault(name, "${" + name + "}");
            m.appendReplacement(sb, Matcher.quoteReplacement(v));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    private static void mqadmin(String namesrv, String[] raw, PrintStream realOut, PrintStream realErr) {
        List<String> args = new ArrayList<>();
        for (String a : raw) args.add(subst(a));
        if (!args.contains("-n")) {
            args.add("-n");
            args.add(namesrv);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Integer exit = null;
        long started = System.currentTimeMillis();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            org.apache.rocketmq.tools.command.MQAdminStartup.main0(args.toArray(new String[0]), null);
        } catch (ExitTrap e) {
            exit = e.status;
        } catch (Throwable t) {
            t.printStackTrace();
        } finally {
            System.out.flush();
            System.err.flush();
            System.setOut(realOut);
            System.setErr(realErr);
        }
        String errText = err.toString(StandardCharsets.UTF_8);
        if (errText.length() > 6000) errText = errText.substring(0, 6000);
        Json.obj().put("type", "cmd").put("name", raw[0]).put("args", args).put("out", out.toString(StandardCharsets.UTF_8))
            .put("err", errText).put("exit", exit).put("ms", System.currentTimeMillis() - started).println();
    }

    private static void deleteTree(File f) {
        File[] kids = f.listFiles();
        if (kids != null) for (File k : kids) deleteTree(k);
        f.delete();
    }
}
