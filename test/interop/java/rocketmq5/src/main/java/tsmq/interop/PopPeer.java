package tsmq.interop;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.impl.consumer.DefaultMQPushConsumerImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.tools.command.MQAdminStartup;
import tsmq.interop.common.Json;

/**
 * Apache RocketMQ 5.3.3 remoting client in POP mode against tsmq (one JVM per scenario group):
 *
 * <pre>
 *   PopPeer &lt;namesrv&gt; run topic=T group=G cluster=C n=40 failKeys=k1,k2 holdKeys=k3,k4
 *                         invisibleMs=5000 expect=N timeoutMs=30000 idleMs=1500 share=0
 *                         setMode=true produce=true mode=POP (PULL: setConsumeMode -m PULL, the consumer pulls)
 *                         reset=&lt;epoch ms | -1&gt; (before consuming: mqadmin resetOffsetByTime -g G -t T -s reset)
 *                         resetQueue=&lt;brokerAddr&gt;,&lt;queueId&gt;,&lt;offset&gt; (before consuming: mqadmin
 *                           resetOffsetByTime -g G -t T -s now -b brokerAddr -q queueId -o offset)
 *                         onlineResetQueue=&lt;brokerAddr&gt;,&lt;queueId&gt;,&lt;offset&gt; expectAfter=M (after the
 *                           first `expect` acks, while consuming: the same mqadmin reset, then one
 *                           message with key &lt;T&gt;-wake sent to that queue, then M more acks awaited)
 *                         rebalanceIntervalMs=R (the client's rocketmq.client.rebalance.waitInterval)
 * </pre>
 * Steps, each optional: (1) n sync sends with keys &lt;T&gt;-0 .. &lt;T&gt;-(n-1) (they also create the
 * topic); (2) `mqadmin setConsumeMode -c C -g G -t T -m POP -q share` through MQAdminStartup in
 * this JVM (SET_MESSAGE_REQUEST_MODE 401 to every master of C); (3) a DefaultMQPushConsumer with clientRebalance=false (it
 * then learns POP mode through QUERY_ASSIGNMENT 400) consumes until `expect` deliveries were
 * acked and nothing arrived for idleMs (or timeoutMs passed). A key in failKeys fails its first
 * delivery (RECONSUME_LATER: the client changes the invisible time to its first pop retry delay,
 * shortened here from 10 s to 1 s); a key in holdKeys is never answered (its consume thread
 * blocks), and the JVM then exits without shutting the consumer down, leaving those deliveries
 * unacked in the broker.
 * Output: JSON lines "mode" (mqadmin's output), "reset" (mqadmin resetOffsetByTime's output), "sent", "recv" (every delivery: key, result
 * ack|fail|hold, reconsumeTimes, queueId, queueOffset, popCk, at), "rpc" (request code → count
 * and response codes, topics of PULL_MESSAGE requests), "summary", "error", "end".
 */
public final class PopPeer {
    /** Records every request code this client sends and what the broker answered. */
    static final class Recorder implements RPCHook {
        final Map<Integer, AtomicInteger> requests = new ConcurrentHashMap<>();
        final Map<String, AtomicInteger> responses = new ConcurrentHashMap<>();
        final Set<String> pulledTopics = ConcurrentHashMap.newKeySet();

        @Override
        public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
            requests.computeIfAbsent(request.getCode(), k -> new AtomicInteger()).incrementAndGet();
            if (request.getCode() == 11) {
                request.makeCustomHeaderToNet();
                String t = request.getExtFields() == null ? null : request.getExtFields().get("topic");
                if (t != null) pulledTopics.add(t);
            }
        }

        @Override
        public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
            if (response != null) responses.computeIfAbsent(request.getCode() + ":" + response.getCode(), k -> new AtomicInteger()).incrementAndGet();
        }

        void print() {
            Map<String, Object> req = new TreeMap<>();
            requests.forEach((k, v) -> req.put(String.valueOf(k), v.get()));
            Map<String, Object> resp = new TreeMap<>();
            responses.forEach((k, v) -> resp.put(k, v.get()));
            Json.obj().put("type", "rpc").put("requests", req).put("responses", resp).put("pulledTopics", new java.util.ArrayList<>(pulledTopics)).println();
        }
    }

    public static void main(String[] args) {
        String namesrv = args[0];
        Map<String, String> o = new TreeMap<>();
        for (int i = 2; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            o.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        // read once by the client's RebalanceService class: set before any client class loads
        if (o.containsKey("rebalanceIntervalMs")) System.setProperty("rocketmq.client.rebalance.waitInterval", o.get("rebalanceIntervalMs"));
        Recorder hook = new Recorder();
        try {
            if (!"run".equals(args[1])) throw new IllegalArgumentException("unknown command " + args[1]);
            run(namesrv, o, hook);
        } catch (Throwable t) {
            Json.obj().put("type", "error").put("op", "run").put("message", String.valueOf(t)).println();
            t.printStackTrace();
        }
        hook.print();
        Json.obj().put("type", "end").println();
        System.exit(0);
    }

    static Set<String> keySet(String csv) {
        return csv == null || csv.isEmpty() ? new HashSet<>() : new HashSet<>(Arrays.asList(csv.split(",")));
    }

    static void run(String namesrv, Map<String, String> o, Recorder hook) throws Exception {
        String topic = o.get("topic");
        String group = o.get("group");
        if (Boolean.parseBoolean(o.getOrDefault("produce", "true"))) produce(namesrv, topic, Integer.parseInt(o.getOrDefault("n", "20")), hook);
        if (Boolean.parseBoolean(o.getOrDefault("setMode", "true"))) setMode(namesrv, o.getOrDefault("cluster", "DefaultCluster"), topic, group, o.getOrDefault("share", "0"), o.getOrDefault("mode", "POP"), hook);
        if (o.containsKey("reset")) resetOffset(namesrv, topic, group, o.get("reset"), hook);
        if (o.containsKey("resetQueue")) {
            String[] q = o.get("resetQueue").split(",");
            String out = mqadmin(new String[] {"resetOffsetByTime", "-n", namesrv, "-g", group, "-t", topic, "-s", "now", "-b", q[0], "-q", q[1], "-o", q[2]}, hook);
            Json.obj().put("type", "reset").put("output", out).println();
        }
        consume(namesrv, topic, group, o, hook);
    }

    static void resetOffset(String namesrv, String topic, String group, String timestamp, Recorder hook) {
        Json.obj().put("type", "reset").put("output", mqadmin(new String[] {"resetOffsetByTime", "-n", namesrv, "-g", group, "-t", topic, "-s", timestamp}, hook)).println();
    }

    /** Runs one mqadmin command in this JVM; returns what it printed. */
    static String mqadmin(String[] args, Recorder hook) {
        PrintStream real = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        synchronized (real) {
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            try {
                MQAdminStartup.main0(args, hook);
            } finally {
                System.setOut(real);
            }
        }
        return captured.toString(StandardCharsets.UTF_8);
    }

    static void setMode(String namesrv, String cluster, String topic, String group, String share, String mode, Recorder hook) {
        String out = mqadmin(new String[] {"setConsumeMode", "-n", namesrv, "-c", cluster, "-g", group, "-t", topic, "-m", mode, "-q", share}, hook);
        Json.obj().put("type", "mode").put("output", out).println();
    }

    /** One message with `key` to queue `queueId` of `topic`. */
    static void sendToQueue(String namesrv, String topic, int queueId, String key, Recorder hook) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer("PID_IOP_POP_WAKE", hook);
        p.setNamesrvAddr(namesrv);
        p.setInstanceName("iop-pop-wake-" + System.nanoTime());
        p.start();
        try {
            SendResult r = p.send(new Message(topic, "TagA", key, ("body-" + key).getBytes(StandardCharsets.UTF_8)), (mqs, msg, arg) -> {
                for (org.apache.rocketmq.common.message.MessageQueue mq : mqs) if (mq.getQueueId() == queueId) return mq;
                return mqs.get(0);
            }, null);
            Json.obj().put("type", "sent").put("key", key).put("status", r.getSendStatus().name()).put("queueId", r.getMessageQueue().getQueueId()).put("queueOffset", r.getQueueOffset()).println();
        } finally {
            p.shutdown();
        }
    }

    static void produce(String namesrv, String topic, int n, Recorder hook) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer("PID_IOP_POP", hook);
        p.setNamesrvAddr(namesrv);
        p.setInstanceName("iop-pop-producer-" + System.nanoTime());
        p.setRetryTimesWhenSendFailed(0);
        p.start();
        try {
            for (int i = 0; i < n; i++) {
                String key = topic + "-" + i;
                SendResult r = p.send(new Message(topic, "TagA", key, ("body-" + key).getBytes(StandardCharsets.UTF_8)));
                Json.obj().put("type", "sent").put("key", key).put("status", r.getSendStatus().name()).put("queueId", r.getMessageQueue().getQueueId()).put("queueOffset", r.getQueueOffset()).println();
            }
        } finally {
            p.shutdown();
        }
    }

    static void consume(String namesrv, String topic, String group, Map<String, String> o, Recorder hook) throws Exception {
        Set<String> failKeys = keySet(o.get("failKeys"));
        Set<String> holdKeys = keySet(o.get("holdKeys"));
        int expect = Integer.parseInt(o.getOrDefault("expect", "0"));
        long timeoutMs = Long.parseLong(o.getOrDefault("timeoutMs", "30000"));
        long idleMs = Long.parseLong(o.getOrDefault("idleMs", "1500"));
        Set<String> failedOnce = ConcurrentHashMap.newKeySet();
        AtomicInteger acked = new AtomicInteger();
        AtomicLong lastDelivery = new AtomicLong(System.currentTimeMillis());
        CountDownLatch never = new CountDownLatch(1);

        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group, hook);
        c.setNamesrvAddr(namesrv);
        c.setInstanceName("iop-pop-consumer-" + System.nanoTime());
        c.setClientRebalance(false);
        c.setPopInvisibleTime(Long.parseLong(o.getOrDefault("invisibleMs", "5000")));
        c.setPopBatchNums(8);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setConsumeThreadMin(8);
        c.setConsumeThreadMax(8);
        c.subscribe(topic, "*");
        // The client's pop retry delays start at 10 s; 1 s keeps the test short.
        Field f = DefaultMQPushConsumerImpl.class.getDeclaredField("popDelayLevel");
        f.setAccessible(true);
        Arrays.fill((int[]) f.get(c.getDefaultMQPushConsumerImpl()), 1);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            ConsumeConcurrentlyStatus status = ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            for (MessageExt m : msgs) {
                String key = m.getKeys();
                String result = "ack";
                if (holdKeys.contains(key)) result = "hold";
                else if (failKeys.contains(key) && failedOnce.add(key)) result = "fail";
                lastDelivery.set(System.currentTimeMillis());
                Json.obj().put("type", "recv").put("key", key).put("result", result).put("reconsumeTimes", m.getReconsumeTimes())
                    .put("queueId", m.getQueueId()).put("queueOffset", m.getQueueOffset()).put("popCk", m.getProperty(MessageConst.PROPERTY_POP_CK))
                    .put("at", System.currentTimeMillis()).println();
                if (result.equals("hold")) {
                    try {
                        never.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                if (result.equals("fail")) status = ConsumeConcurrentlyStatus.RECONSUME_LATER;
                else acked.incrementAndGet();
            }
            return status;
        });
        c.setConsumeMessageBatchMaxSize(1);
        c.start();
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (System.currentTimeMillis() < deadline) {
            long now = System.currentTimeMillis();
            if (acked.get() >= expect && now - lastDelivery.get() >= idleMs) break;
            Thread.sleep(100);
        }
        if (o.containsKey("onlineResetQueue")) {
            String[] q = o.get("onlineResetQueue").split(",");
            String out = mqadmin(new String[] {"resetOffsetByTime", "-n", namesrv, "-g", group, "-t", topic, "-s", "now", "-b", q[0], "-q", q[1], "-o", q[2]}, hook);
            Json.obj().put("type", "reset").put("output", out).put("at", System.currentTimeMillis()).println();
            sendToQueue(namesrv, topic, Integer.parseInt(q[1]), topic + "-wake", hook);
            int target = expect + Integer.parseInt(o.getOrDefault("expectAfter", "0"));
            deadline = System.currentTimeMillis() + timeoutMs;
            while (System.currentTimeMillis() < deadline) {
                long now = System.currentTimeMillis();
                if (acked.get() >= target && now - lastDelivery.get() >= idleMs) break;
                Thread.sleep(100);
            }
        }
        // let the last acks leave the client (they are sent asynchronously)
        Thread.sleep(300);
        Json.obj().put("type", "summary").put("acked", acked.get()).put("expect", expect).println();
        if (holdKeys.isEmpty()) c.shutdown();
    }
}
