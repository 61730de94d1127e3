package tsmq.interop.grpc5;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import tsmq.interop.common.Json;

/**
 * rocketmq-client-java 5.0.8 (gRPC) peer for timer messages:
 *
 * <pre>
 *   TimerGrpcPeer &lt;endpoints&gt; topic=T group=G n=6 delayMs=3000 timeoutMs=30000 idleMs=2000
 * </pre>
 * Sends n messages with MessageBuilder.setDeliveryTimestamp(now + delayMs) (keys grpc-i), recalls
 * grpc-(n-1) with Producer.recallMessage and its SendReceipt's recall handle, tries a bad handle
 * and that handle with its time moved 1 s into the past ("expiredRecall"), sends one message due
 * in 2 days, beyond Apache's proxy maxDelayTimeMills of 1 day ("farSend"; these three print the
 * exception's class and message), then receives with a SimpleConsumer until every other key
 * arrived plus idleMs.
 * Output: JSON lines "sent", "recalled", "badRecall", "expiredRecall", "farSend", "recv", "error", "end".
 */
public final class TimerGrpcPeer {
    public static void main(String[] args) throws Exception {
        String endpoints = args[0];
        Map<String, String> o = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            o.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        String topic = o.get("topic");
        int n = Integer.parseInt(o.getOrDefault("n", "6"));
        long delayMs = Long.parseLong(o.getOrDefault("delayMs", "3000"));
        long timeoutMs = Long.parseLong(o.getOrDefault("timeoutMs", "30000"));
        long idleMs = Long.parseLong(o.getOrDefault("idleMs", "2000"));
        ClientServiceProvider provider = ClientServiceProvider.loadService();
        ClientConfiguration cfg = ClientConfiguration.newBuilder().setEndpoints(endpoints).enableSsl(false).build();
        try (Producer producer = provider.newProducerBuilder().setClientConfiguration(cfg).setTopics(topic).build();
             SimpleConsumer consumer = provider.newSimpleConsumerBuilder().setClientConfiguration(cfg)
                 .setConsumerGroup(o.getOrDefault("group", "GID_TIMER_GRPC5")).setAwaitDuration(Duration.ofSeconds(5))
                 .setSubscriptionExpressions(Collections.singletonMap(topic, FilterExpression.SUB_ALL)).build()) {
            String lastHandle = null;
            for (int i = 0; i < n; i++) {
                long deliverMs = System.currentTimeMillis() + delayMs;
                Message m = provider.newMessageBuilder().setTopic(topic).setTag("TagG").setKeys("grpc-" + i)
                    .setBody(("grpc-" + i).getBytes(StandardCharsets.UTF_8)).setDeliveryTimestamp(deliverMs).build();
                SendReceipt r = producer.send(m);
                lastHandle = r.getRecallHandle();
                Json.obj().put("type", "sent").put("key", "grpc-" + i).put("messageId", r.getMessageId().toString())
                    .put("recallHandle", r.getRecallHandle()).put("deliverMs", deliverMs).println();
            }
            try {
                String id = String.valueOf(producer.recallMessage(topic, lastHandle).getMessageId());
                Json.obj().put("type", "recalled").put("key", "grpc-" + (n - 1)).put("messageId", id).println();
            } catch (Exception e) {
                Json.obj().put("type", "error").put("op", "recall").put("message", String.valueOf(e.getMessage())).println();
            }
            try {
                producer.recallMessage(topic, "djEgbm8gaGFuZGxl");
                Json.obj().put("type", "error").put("op", "bad-recall").put("message", "accepted").println();
            } catch (Exception e) {
                Json.obj().put("type", "badRecall").put("error", e.getClass().getSimpleName()).put("message", String.valueOf(e.getMessage())).println();
            }
            String[] f = new String(Base64.getUrlDecoder().decode(lastHandle), StandardCharsets.UTF_8).split(" ");
            f[3] = String.valueOf(System.currentTimeMillis() - 1000);
            try {
                producer.recallMessage(topic, Base64.getUrlEncoder().encodeToString(String.join(" ", f).getBytes(StandardCharsets.UTF_8)));
                Json.obj().put("type", "error").put("op", "expired-recall").put("message", "accepted").println();
            } catch (Exception e) {
                Json.obj().put("type", "expiredRecall").put("error", e.getClass().getSimpleName()).put("message", String.valueOf(e.getMessage())).println();
            }
            try {
                producer.send(provider.newMessageBuilder().setTopic(topic).setTag("TagG").setKeys("far-0")
                    .setBody("far-0".getBytes(StandardCharsets.UTF_8)).setDeliveryTimestamp(System.currentTimeMillis() + 2L * 24 * 3600 * 1000).build());
                Json.obj().put("type", "error").put("op", "far-send").put("message", "accepted").println();
            } catch (Exception e) {
                Json.obj().put("type", "farSend").put("error", e.getClass().getSimpleName()).put("message", String.valueOf(e.getMessage())).println();
            }
            Set<String> got = new HashSet<>();
            long deadline = System.currentTimeMillis() + timeoutMs;
            long idleUntil = Long.MAX_VALUE;
            while (System.currentTimeMillis() < Math.min(deadline, idleUntil)) {
                List<MessageView> views = consumer.receive(16, Duration.ofSeconds(10));
                long now = System.currentTimeMillis();
                for (MessageView v : views) {
                    String key = v.getKeys().isEmpty() ? "" : v.getKeys().iterator().next();
                    got.add(key);
                    Json.obj().put("type", "recv").put("key", key).put("at", now)
                        .put("deliveryTimestamp", v.getDeliveryTimestamp().orElse(-1L))
                        .put("messageId", v.getMessageId().toString()).println();
                    consumer.ack(v);
                }
                if (got.size() >= n - 1 && idleUntil == Long.MAX_VALUE) idleUntil = System.currentTimeMillis() + idleMs;
            }
        } catch (Throwable t) {
            StringBuilder chain = new StringBuilder(String.valueOf(t));
            for (Throwable c = t.getCause(); c != null; c = c.getCause()) chain.append(" <- ").append(c);
            Json.obj().put("type", "error").put("op", "run").put("message", chain.toString()).println();
        }
        Json.obj().put("type", "end").println();
        System.exit(0);
    }
}
