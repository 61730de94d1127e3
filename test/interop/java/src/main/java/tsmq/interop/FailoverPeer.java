package tsmq.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import tsmq.interop.common.Json;

/**
 * Apache RocketMQ 4.9.8 producer + push consumer across a broker failover (the test kills the
 * master meanwhile):
 *
 * <pre>
 *   FailoverPeer &lt;namesrv&gt; topic=T group=G durationMs=15000 pollMs=1000 drainMs=60000
 * </pre>
 * Sends SYNC continuously for durationMs (sendMsgTimeout 3000, 2 retries, route refresh every
 * pollMs) while the push consumer (CONSUME_FROM_FIRST_OFFSET) records every key it gets. Prints
 * {"type":"ready"} once both started, {"type":"ack","key","t"} per acknowledged send (t = epoch
 * ms), {"type":"fail","t","error"} per failed send, then waits up to drainMs for every
 * acknowledged key and prints {"type":"summary","acked","failed","consumed","missingCount",
 * "missing":[first 20],"redelivered"}.
 */
public final class FailoverPeer {
    public static void main(String[] args) throws Exception {
        String namesrv = args[0];
        Opts o = new Opts(args, 1);
        String topic = o.req("topic");
        String group = o.str("group", "GID_FAILOVER_JAVA");
        long durationMs = o.lng("durationMs", 15000);
        int pollMs = o.num("pollMs", 1000);
        long drainMs = o.lng("drainMs", 60000);

        Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(namesrv);
        c.setInstanceName("failover-consumer-" + System.nanoTime());
        c.setPollNameServerInterval(pollMs);
        c.setHeartbeatBrokerInterval(1000);
        c.setPersistConsumerOffsetInterval(1000);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) seen.computeIfAbsent(m.getKeys(), k -> new AtomicInteger()).incrementAndGet();
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();

        DefaultMQProducer p = new DefaultMQProducer("PID_FAILOVER_JAVA");
        p.setNamesrvAddr(namesrv);
        p.setInstanceName("failover-producer-" + System.nanoTime());
        p.setPollNameServerInterval(pollMs);
        p.setSendMsgTimeout(3000);
        p.setRetryTimesWhenSendFailed(2);
        p.start();
        Json.obj().put("type", "ready").put("t", System.currentTimeMillis()).println();

        List<String> acked = new ArrayList<>();
        int failed = 0;
        long end = System.currentTimeMillis() + durationMs;
        for (int n = 0; System.currentTimeMillis() < end; n++) {
            String key = "j-" + n;
            try {
                SendResult r = p.send(new Message(topic, "failover", key, ("body-" + key).getBytes(StandardCharsets.UTF_8)));
                if (r.getSendStatus() == SendStatus.SEND_OK) {
                    acked.add(key);
                    Json.obj().put("type", "ack").put("key", key).put("t", System.currentTimeMillis()).println();
                    continue;
                }
                failed++;
                Json.obj().put("type", "fail").put("t", System.currentTimeMillis()).put("error", r.getSendStatus().name()).println();
            } catch (Throwable t) {
                failed++;
                Json.obj().put("type", "fail").put("t", System.currentTimeMillis()).put("error", String.valueOf(t).split("\n")[0]).println();
                Thread.sleep(50);
            }
        }
        p.shutdown();
        long drainEnd = System.currentTimeMillis() + drainMs;
        List<String> missing = new ArrayList<>();
        for (;;) {
            missing.clear();
            for (String k : acked) if (!seen.containsKey(k)) missing.add(k);
            if (missing.isEmpty() || System.currentTimeMillis() > drainEnd) break;
            Thread.sleep(200);
        }
        int redelivered = 0;
        for (AtomicInteger v : seen.values()) if (v.get() > 1) redelivered++;
        c.shutdown();
        Json.obj().put("type", "summary").put("acked", acked.size()).put("failed", failed).put("consumed", seen.size())
            .put("missingCount", missing.size()).put("missing", missing.subList(0, Math.min(20, missing.size())))
            .put("redelivered", redelivered).println();
        System.exit(0);
    }
}
