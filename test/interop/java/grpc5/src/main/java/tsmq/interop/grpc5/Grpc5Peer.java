package tsmq.interop.grpc5;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.apache.rocketmq.client.apis.producer.Transaction;
import org.apache.rocketmq.client.apis.producer.TransactionResolution;
import tsmq.interop.common.Json;

/**
 * rocketmq-client-java 5.0.x (the RocketMQ 5 gRPC client, unpatched) against tsmq's gRPC front.
 *
 * Usage: Grpc5Peer <endpoints> <scenario> [key=value ...]; prints one JSON object per line:
 *   {"type":"started","client":...,"ms":...}   a client started (its Telemetry settings arrived)
 *   {"type":"sent","scenario":...,"key":...,"messageId":...}
 *   {"type":"recv","scenario":...,"key":...,"body":...,"tag":...,"attempt":...,"at":...}
 *   {"type":"refused","op":...,"class":...,"message":...}   an expected refusal
 *   {"type":"error","op":...,"class":...,"message":...}     anything that went wrong
 *   {"type":"end","scenario":...}
 *
 * Scenarios:
 *   produce-simple  Producer normal/FIFO/delay sends, transactional producer (commit, rollback,
 *                   check-back), SimpleConsumer receive+ack, changeInvisibleDuration, stale ack.
 *   push            PushConsumers: tag filter, SQL92 filter, retry after FAILURE, DLQ after max
 *                   attempts (read back from %DLQ%<group> with a SimpleConsumer).
 *   send-receive    topic=T group=G n=N: N sends, then a SimpleConsumer receives and acks N.
 *   receive         topic=T group=G n=N timeoutMs=M: a SimpleConsumer receives and acks until N
 *                   arrived or M ms passed (no sends).
 *   push-die        topic=T group=G n=N: a PushConsumer whose listener never returns receives the
 *                   N messages a producer sends, prints {"type":"dying","at":...} and SIGKILLs its
 *                   own JVM (no NotifyClientTermination, no ack: the connection just drops).
 *   simple-close    topic=T group=G n=N invisibleMs=I timeoutMs=M: sends N, a SimpleConsumer
 *                   receives them with invisible time I and closes without acking (prints
 *                   {"type":"closed","at":...}); a second SimpleConsumer of G then receives and acks
 *                   until N arrived or M ms passed.
 *   produce-hold    topics=T1,T2 releaseFile=F: a Producer of those topics sends one message to T1,
 *                   prints {"type":"holding"}, and stays up until file F exists (60 s at most),
 *                   then shuts down (NotifyClientTermination) and prints {"type":"closed"}.
 * Option ssl=true: connect with TLS (the client's own enableSsl, trusting any certificate).
 * Option namespace=NS: ClientConfiguration.setNamespace(NS) for every client.
 */
public final class Grpc5Peer {
    private static final ClientServiceProvider P = ClientServiceProvider.loadService();
    private static ClientConfiguration cfg;
    private static Map<String, String> opts;
    private static final List<AutoCloseable> clients = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        String endpoints = args[0];
        String scenario = args[1];
        opts = new HashMap<>();
        for (int i = 2; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            opts.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        var cfgBuilder = ClientConfiguration.newBuilder().setEndpoints(endpoints).enableSsl(Boolean.parseBoolean(opts.getOrDefault("ssl", "false")))
            .setRequestTimeout(Duration.ofSeconds(5));
        if (opts.containsKey("namespace")) cfgBuilder.setNamespace(opts.get("namespace"));
        cfg = cfgBuilder.build();
        try {
            switch (scenario) {
                case "produce-simple":
                    produceSimple();
                    break;
                case "push":
                    push();
                    break;
                case "send-receive":
                    sendReceive();
                    break;
                case "receive":
                    drain("receive", startSimple("simple", opts.get("group"), opts.get("topic"), "*"), Integer.parseInt(opts.get("n")),
                        Long.parseLong(opts.getOrDefault("timeoutMs", "20000")), true);
                    break;
                case "push-die":
                    pushDie();
                    break;
                case "simple-close":
                    simpleClose();
                    break;
                case "produce-hold":
                    produceHold();
                    break;
                default:
                    throw new IllegalArgumentException("unknown scenario " + scenario);
            }
        } catch (Throwable e) {
            error(scenario, e);
        }
        for (AutoCloseable c : clients) {
            try {
                c.close();
            } catch (Throwable e) {
                error("close", e);
            }
        }
        Json.obj().put("type", "end").put("scenario", scenario).println();
        System.exit(0);
    }

    // ------------------------------------------------------------------ send-receive

    private static void sendReceive() throws Exception {
        String topic = opts.get("topic");
        int n = Integer.parseInt(opts.get("n"));
        Producer producer = startProducer("producer", null, topic);
        for (int i = 0; i < n; i++) {
            Message m = P.newMessageBuilder().setTopic(topic).setTag("TagS").setKeys("sr-" + i)
                .setBody(("sr-" + i).getBytes(StandardCharsets.UTF_8)).build();
            send(producer, "send-receive", m, null);
        }
        SimpleConsumer c = startSimple("simple", opts.get("group"), topic, "TagS");
        drain("send-receive", c, n, 20_000, true);
    }

    // ------------------------------------------------------------------ departed clients

    private static void produceHold() throws Exception {
        String[] topics = opts.get("topics").split(",");
        Producer producer = startProducer("producer", null, topics);
        send(producer, "produce-hold", P.newMessageBuilder().setTopic(topics[0]).setKeys("hold-0")
            .setBody("hold".getBytes(StandardCharsets.UTF_8)).build(), null);
        Json.obj().put("type", "holding").put("at", System.currentTimeMillis()).println();
        java.nio.file.Path release = java.nio.file.Paths.get(opts.get("releaseFile"));
        long deadline = System.currentTimeMillis() + 60_000;
        while (!java.nio.file.Files.exists(release) && System.currentTimeMillis() < deadline) Thread.sleep(50);
        clients.remove(producer);
        producer.close();
        Json.obj().put("type", "closed").put("at", System.currentTimeMillis()).println();
    }

    private static void pushDie() throws Exception {
        String topic = opts.get("topic");
        int n = Integer.parseInt(opts.get("n"));
        java.util.Set<String> held = ConcurrentHashMap.newKeySet();
        long t0 = System.currentTimeMillis();
        PushConsumer c = P.newPushConsumerBuilder().setClientConfiguration(cfg).setConsumerGroup(opts.get("group"))
            .setSubscriptionExpressions(Collections.singletonMap(topic, new FilterExpression("*", FilterExpressionType.TAG)))
            .setMessageListener(mv -> {
                recv("push-die", mv).println();
                held.add(key(mv));
                sleep(600_000); // never acks: the JVM is killed while the listener holds the message
                return ConsumeResult.SUCCESS;
            }).build();
        clients.add(c);
        Json.obj().put("type", "started").put("client", "pushDie").put("ms", System.currentTimeMillis() - t0).println();
        Producer producer = startProducer("producer", null, topic);
        for (int i = 0; i < n; i++) {
            send(producer, "push-die", P.newMessageBuilder().setTopic(topic).setKeys("die-" + i)
                .setBody(("die body " + i).getBytes(StandardCharsets.UTF_8)).build(), null);
        }
        long deadline = System.currentTimeMillis() + 15_000;
        while (held.size() < n && System.currentTimeMillis() < deadline) Thread.sleep(20);
        Json.obj().put("type", "dying").put("held", held.size()).put("at", System.currentTimeMillis()).println();
        System.out.flush();
        new ProcessBuilder("kill", "-9", String.valueOf(ProcessHandle.current().pid())).inheritIO().start().waitFor();
        Thread.sleep(10_000);
        throw new IllegalStateException("kill -9 of the own JVM did not end it");
    }

    private static void simpleClose() throws Exception {
        String topic = opts.get("topic");
        String group = opts.get("group");
        int n = Integer.parseInt(opts.get("n"));
        Producer producer = startProducer("producer", null, topic);
        for (int i = 0; i < n; i++) {
            send(producer, "simple-close", P.newMessageBuilder().setTopic(topic).setKeys("close-" + i)
                .setBody(("close body " + i).getBytes(StandardCharsets.UTF_8)).build(), null);
        }
        SimpleConsumer first = startSimple("simpleFirst", group, topic, "*");
        clients.remove(first);
        Duration invisible = Duration.ofMillis(Long.parseLong(opts.get("invisibleMs")));
        int got = 0;
        long deadline = System.currentTimeMillis() + 15_000;
        while (got < n && System.currentTimeMillis() < deadline) {
            got += receiveSome("simple-close-first", first, 16, invisible, deadline - System.currentTimeMillis()).size();
        }
        first.close(); // NotifyClientTermination, receipts not acked
        Json.obj().put("type", "closed").put("held", got).put("at", System.currentTimeMillis()).println();
        SimpleConsumer second = startSimple("simpleSecond", group, topic, "*");
        drain("simple-close-second", second, n, Long.parseLong(opts.getOrDefault("timeoutMs", "15000")), true);
    }

    // ------------------------------------------------------------------ produce-simple

    private static void produceSimple() throws Exception {
        String normalT = opts.get("normalTopic");
        String fifoT = opts.get("fifoTopic");
        String delayT = opts.get("delayTopic");
        String invisT = opts.get("invisTopic");
        String staleT = opts.get("staleTopic");
        String txT = opts.get("txTopic");
        int n = Integer.parseInt(opts.get("n"));
        int fifoGroups = Integer.parseInt(opts.get("fifoGroups"));
        int perGroup = Integer.parseInt(opts.get("perGroup"));
        long delayMs = Long.parseLong(opts.get("delayMs"));

        Producer producer = startProducer("producer", null, normalT, fifoT, delayT, invisT, staleT);
        for (int i = 0; i < n; i++) {
            Message m = P.newMessageBuilder().setTopic(normalT).setTag(i % 2 == 0 ? "TagA" : "TagB")
                .setKeys("normal-" + i, "k2-" + i).addProperty("idx", String.valueOf(i))
                .setBody(("body-" + i).getBytes(StandardCharsets.UTF_8)).build();
            send(producer, "normal", m, null);
        }
        for (int s = 0; s < perGroup; s++) {
            for (int g = 0; g < fifoGroups; g++) {
                String key = "fifo-" + g + "-" + s;
                Message m = P.newMessageBuilder().setTopic(fifoT).setMessageGroup("group-" + g).setKeys(key)
                    .setBody(key.getBytes(StandardCharsets.UTF_8)).build();
                send(producer, "fifo", m, null);
            }
        }
        long due = System.currentTimeMillis() + delayMs;
        Message delayed = P.newMessageBuilder().setTopic(delayT).setKeys("delay-0").setDeliveryTimestamp(due)
            .setBody("delayed".getBytes(StandardCharsets.UTF_8)).build();
        long sentAt = System.currentTimeMillis();
        send(producer, "delay", delayed, null);
        Json.obj().put("type", "delaySent").put("due", due).put("sentAt", sentAt).println();
        send(producer, "invis", P.newMessageBuilder().setTopic(invisT).setKeys("invis-0").setBody("invis".getBytes(StandardCharsets.UTF_8)).build(), null);
        send(producer, "stale", P.newMessageBuilder().setTopic(staleT).setKeys("stale-0").setBody("stale".getBytes(StandardCharsets.UTF_8)).build(), null);

        // Transactions: commit, rollback, and two left open for the check-back to resolve.
        Producer tx = startProducer("txProducer", mv -> {
            String key = key(mv);
            Json.obj().put("type", "checked").put("key", key).put("at", System.currentTimeMillis())
                .put("messageId", mv.getMessageId().toString()).put("body", str(mv.getBody())).println();
            if (key.equals("tx-check-commit")) return TransactionResolution.COMMIT;
            if (key.equals("tx-check-rollback")) return TransactionResolution.ROLLBACK;
            return TransactionResolution.UNKNOWN;
        }, txT);
        for (String key : new String[] {"tx-commit", "tx-rollback", "tx-check-commit", "tx-check-rollback"}) {
            try {
                Transaction t = tx.beginTransaction();
                Message m = P.newMessageBuilder().setTopic(txT).setKeys(key).setBody(("tx body " + key).getBytes(StandardCharsets.UTF_8)).build();
                send(tx, "tx", m, t);
                if (key.equals("tx-commit")) t.commit();
                if (key.equals("tx-rollback")) t.rollback();
            } catch (Throwable e) {
                error("tx " + key, e);
            }
        }

        SimpleConsumer normal = startSimple("simpleNormal", opts.get("normalGroup"), normalT, "*");
        drain("normal", normal, n, 20_000, true);
        // FIFO: take one message and keep it in flight; a second receive must not hand out the
        // next message of its group. Then ack it and receive the rest.
        SimpleConsumer fifo = startSimple("simpleFifo", opts.get("fifoGroup"), fifoT, "*");
        List<MessageView> head = receiveSome("fifo", fifo, 1, Duration.ofSeconds(30), 15_000);
        List<MessageView> whileHeld = receiveSome("fifo", fifo, 16, Duration.ofSeconds(30), 3_000);
        for (MessageView mv : whileHeld) ack("fifo", fifo, mv);
        for (MessageView mv : head) {
            ack("fifo", fifo, mv);
            Json.obj().put("type", "fifoHeadAcked").put("key", key(mv)).println();
        }
        drain("fifo", fifo, fifoGroups * perGroup - head.size() - whileHeld.size(), 20_000, true);
        SimpleConsumer delay = startSimple("simpleDelay", opts.get("delayGroup"), delayT, "*");
        drain("delay", delay, 1, delayMs + 15_000, true);
        SimpleConsumer txc = startSimple("simpleTx", opts.get("txGroup"), txT, "*");
        drain("tx", txc, 2, 20_000, true);
        // Anything rolled back must stay invisible: look once more after the check-backs.
        drain("tx", txc, 1, 2_500, true);

        // changeInvisibleDuration: received with 30 s, shortened to 1 s, comes back after ~1 s.
        SimpleConsumer invis = startSimple("simpleInvis", opts.get("invisGroup"), invisT, "*");
        List<MessageView> first = receiveSome("invis", invis, 1, Duration.ofSeconds(30), 15_000);
        if (!first.isEmpty()) {
            MessageView mv = first.get(0);
            long changedAt = System.currentTimeMillis();
            try {
                invis.changeInvisibleDuration(mv, Duration.ofSeconds(1));
                Json.obj().put("type", "changed").put("key", key(mv)).put("at", changedAt).println();
            } catch (Throwable e) {
                error("changeInvisibleDuration", e);
            }
            List<MessageView> again = receiveSome("invis", invis, 1, Duration.ofSeconds(30), 10_000);
            for (MessageView m : again) ack("invis", invis, m);
        }

        // A receipt handle whose invisible time is over is stale: ack refused, message comes back.
        SimpleConsumer stale = startSimple("simpleStale", opts.get("staleGroup"), staleT, "*");
        List<MessageView> got = receiveSome("stale", stale, 1, Duration.ofSeconds(1), 15_000);
        if (!got.isEmpty()) {
            Thread.sleep(2_000);
            try {
                stale.ack(got.get(0));
                Json.obj().put("type", "acked").put("scenario", "stale-first").put("key", key(got.get(0))).println();
            } catch (Throwable e) {
                Json.obj().put("type", "refused").put("op", "staleAck").put("class", e.getClass().getSimpleName())
                    .put("message", String.valueOf(e.getMessage())).println();
            }
            List<MessageView> again = receiveSome("stale", stale, 1, Duration.ofSeconds(30), 10_000);
            for (MessageView m : again) ack("stale", stale, m);
            List<MessageView> none = receiveSome("stale", stale, 1, Duration.ofSeconds(30), 2_500);
            Json.obj().put("type", "staleDrained").put("count", none.size()).println();
        }
    }

    // ------------------------------------------------------------------ push

    private static void push() throws Exception {
        String pushT = opts.get("pushTopic");
        String retryT = opts.get("retryTopic");
        int n = Integer.parseInt(opts.get("n"));
        int expectTag = Integer.parseInt(opts.get("expectTag"));
        int expectSql = Integer.parseInt(opts.get("expectSql"));
        int maxAttempts = Integer.parseInt(opts.get("maxAttempts"));
        String retryGroup = opts.get("retryGroup");
        Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
        BooleanSupplier done = () -> count(counts, "tag") >= expectTag && count(counts, "sql") >= expectSql
            && count(counts, "retry:retry-0") >= 2 && count(counts, "retry:ok-0") >= 1
            && count(counts, "retry:dlq-0") >= maxAttempts;

        startPush("pushTag", opts.get("tagGroup"), pushT, new FilterExpression("TagA || TagC", FilterExpressionType.TAG), "tag", counts, mv -> true);
        startPush("pushSql", opts.get("sqlGroup"), pushT, new FilterExpression("region = 'hz' AND price > 20", FilterExpressionType.SQL92), "sql", counts, mv -> true);
        startPush("pushRetry", retryGroup, retryT, new FilterExpression("*", FilterExpressionType.TAG), "retry", counts,
            mv -> {
                String key = key(mv);
                if (key.equals("dlq-0")) return false;
                return !(key.equals("retry-0") && mv.getDeliveryAttempt() == 1);
            });

        Producer producer = startProducer("producer", null, pushT, retryT);
        String[] tags = {"TagA", "TagB", "TagC"};
        for (int i = 0; i < n; i++) {
            Message m = P.newMessageBuilder().setTopic(pushT).setTag(tags[i % 3]).setKeys("push-" + i)
                .addProperty("region", i % 2 == 0 ? "hz" : "bj").addProperty("price", String.valueOf(i * 5))
                .setBody(("push body " + i).getBytes(StandardCharsets.UTF_8)).build();
            send(producer, "push", m, null);
        }
        for (String key : new String[] {"retry-0", "ok-0", "dlq-0"}) {
            send(producer, "retry", P.newMessageBuilder().setTopic(retryT).setKeys(key).setBody(("retry body " + key).getBytes(StandardCharsets.UTF_8)).build(), null);
        }
        long deadline = System.currentTimeMillis() + Long.parseLong(opts.getOrDefault("timeoutMs", "30000"));
        while (!done.getAsBoolean() && System.currentTimeMillis() < deadline) Thread.sleep(50);
        Json.obj().put("type", "pushDone").put("complete", done.getAsBoolean()).put("at", System.currentTimeMillis()).println();
        // Give unwanted deliveries (filtered-out messages, a 4th DLQ attempt) a chance to show up.
        Thread.sleep(Long.parseLong(opts.getOrDefault("settleMs", "1500")));

        SimpleConsumer dlq = startSimple("simpleDlq", opts.get("dlqReaderGroup"), "%DLQ%" + retryGroup, "*");
        drain("dlq", dlq, 1, 15_000, true);
    }

    private interface Decide {
        boolean ok(MessageView mv);
    }

    private static void startPush(String name, String group, String topic, FilterExpression expr, String scenario,
                                  Map<String, AtomicInteger> counts, Decide decide) throws Exception {
        long t0 = System.currentTimeMillis();
        PushConsumer c = P.newPushConsumerBuilder().setClientConfiguration(cfg).setConsumerGroup(group)
            .setSubscriptionExpressions(Collections.singletonMap(topic, expr))
            .setMessageListener(mv -> {
                boolean ok = decide.ok(mv);
                recv(scenario, mv).put("result", ok ? "SUCCESS" : "FAILURE").println();
                counts.computeIfAbsent(scenario, k -> new AtomicInteger()).incrementAndGet();
                counts.computeIfAbsent(scenario + ":" + key(mv), k -> new AtomicInteger()).incrementAndGet();
                return ok ? ConsumeResult.SUCCESS : ConsumeResult.FAILURE;
            }).build();
        clients.add(c);
        Json.obj().put("type", "started").put("client", name).put("ms", System.currentTimeMillis() - t0).println();
    }

    private static int count(Map<String, AtomicInteger> counts, String k) {
        AtomicInteger c = counts.get(k);
        return c == null ? 0 : c.get();
    }

    // ------------------------------------------------------------------ helpers

    private static Producer startProducer(String name, org.apache.rocketmq.client.apis.producer.TransactionChecker checker, String... topics) throws Exception {
        long t0 = System.currentTimeMillis();
        var b = P.newProducerBuilder().setClientConfiguration(cfg).setTopics(topics);
        if (checker != null) b.setTransactionChecker(checker);
        Producer p = b.build();
        clients.add(p);
        Json.obj().put("type", "started").put("client", name).put("ms", System.currentTimeMillis() - t0).println();
        return p;
    }

    private static SimpleConsumer startSimple(String name, String group, String topic, String tagExpr) throws Exception {
        long t0 = System.currentTimeMillis();
        SimpleConsumer c = P.newSimpleConsumerBuilder().setClientConfiguration(cfg).setConsumerGroup(group)
            .setAwaitDuration(Duration.ofSeconds(2))
            .setSubscriptionExpressions(Collections.singletonMap(topic, new FilterExpression(tagExpr, FilterExpressionType.TAG)))
            .build();
        clients.add(c);
        Json.obj().put("type", "started").put("client", name).put("ms", System.currentTimeMillis() - t0).println();
        return c;
    }

    private static void send(Producer p, String scenario, Message m, Transaction tx) {
        try {
            SendReceipt r = tx == null ? p.send(m) : p.send(m, tx);
            Json.obj().put("type", "sent").put("scenario", scenario).put("key", m.getKeys().iterator().next())
                .put("messageId", r.getMessageId().toString()).put("at", System.currentTimeMillis()).println();
        } catch (Throwable e) {
            error("send " + scenario + " " + m.getKeys(), e);
        }
    }

    /** Receives until `want` messages arrived or `timeoutMs` passed; prints and optionally acks each. */
    private static void drain(String scenario, SimpleConsumer c, int want, long timeoutMs, boolean ack) {
        int got = 0;
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (got < want && System.currentTimeMillis() < deadline) {
            List<MessageView> batch = receiveSome(scenario, c, 16, Duration.ofSeconds(15), deadline - System.currentTimeMillis());
            for (MessageView mv : batch) {
                got++;
                if (ack) ack(scenario, c, mv);
            }
        }
    }

    /** One receive (retried on errors until `timeoutMs`); each message printed as a recv line. */
    private static List<MessageView> receiveSome(String scenario, SimpleConsumer c, int max, Duration invisible, long timeoutMs) {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (System.currentTimeMillis() < deadline) {
            try {
                List<MessageView> batch = c.receive(max, invisible);
                for (MessageView mv : batch) recv(scenario, mv).println();
                if (!batch.isEmpty()) return batch;
            } catch (Throwable e) {
                error("receive " + scenario, e);
                sleep(200);
            }
        }
        return Collections.emptyList();
    }

    private static void ack(String scenario, SimpleConsumer c, MessageView mv) {
        try {
            c.ack(mv);
            Json.obj().put("type", "acked").put("scenario", scenario).put("key", key(mv)).println();
        } catch (Throwable e) {
            error("ack " + scenario + " " + key(mv), e);
        }
    }

    private static Json recv(String scenario, MessageView mv) {
        Map<String, String> props = new LinkedHashMap<>(mv.getProperties());
        return Json.obj().put("type", "recv").put("scenario", scenario).put("key", key(mv))
            .put("keys", new ArrayList<>(mv.getKeys())).put("body", str(mv.getBody()))
            .put("tag", mv.getTag().orElse(null)).put("messageGroup", mv.getMessageGroup().orElse(null))
            .put("messageId", mv.getMessageId().toString()).put("topic", mv.getTopic())
            .put("deliveryTimestamp", mv.getDeliveryTimestamp().orElse(null))
            .put("bornTimestamp", mv.getBornTimestamp()).put("attempt", mv.getDeliveryAttempt())
            .put("props", props).put("at", System.currentTimeMillis());
    }

    /** The message's main key (normal messages also carry a second key "k2-<i>"). */
    private static String key(MessageView mv) {
        for (String k : mv.getKeys()) if (!k.startsWith("k2-")) return k;
        return "";
    }

    private static String str(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return new String(a, StandardCharsets.UTF_8);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void error(String op, Throwable e) {
        Json.obj().put("type", "error").put("op", op).put("class", e.getClass().getName())
            .put("message", String.valueOf(e.getMessage())).println();
        e.printStackTrace();
    }
}
