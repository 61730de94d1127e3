package tsmq.interop.grpc5;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientConfigurationBuilder;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.SessionCredentialsProvider;
import org.apache.rocketmq.client.apis.StaticSessionCredentialsProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import tsmq.interop.common.Json;

/**
 * rocketmq-client-java 5.x with SessionCredentialsProvider against tsmq's gRPC front with ACL 2.0
 * on. Users exist already (AclPeer5): alice (Pub+Sub on topic T, group G), bob (Sub on T only).
 *
 * <pre>
 *   AclGrpcPeer &lt;endpoints&gt; &lt;topic&gt; &lt;group&gt; &lt;n&gt;
 * </pre>
 * Prints "sent" (alice's n sends), "refused" {case, class, message} for: unsigned (no credentials),
 * wrongSecret, noPubPermission (bob sends), groupNotAllowed (alice receives as group G-other);
 * "recv" for the n messages alice's SimpleConsumer receives and acks; "end".
 */
public final class AclGrpcPeer {
    private static final ClientServiceProvider P = ClientServiceProvider.loadService();

    private static ClientConfiguration cfg(String endpoints, SessionCredentialsProvider creds) {
        ClientConfigurationBuilder b = ClientConfiguration.newBuilder().setEndpoints(endpoints).enableSsl(false).setRequestTimeout(Duration.ofSeconds(5));
        if (creds != null) b.setCredentialProvider(creds);
        return b.build();
    }

    private static String messageOf(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) sb.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage()).append(" | ");
        return sb.toString();
    }

    private static void refusedSend(String kase, String endpoints, String topic, SessionCredentialsProvider creds) {
        Producer p = null;
        try {
            p = P.newProducerBuilder().setClientConfiguration(cfg(endpoints, creds)).setTopics(topic).build();
            SendReceipt r = p.send(P.newMessageBuilder().setTopic(topic).setKeys("refused-" + kase).setBody("x".getBytes(StandardCharsets.UTF_8)).build());
            Json.obj().put("type", "unexpected").put("case", kase).put("messageId", r.getMessageId().toString()).println();
        } catch (Throwable t) {
            Json.obj().put("type", "refused").put("case", kase).put("class", t.getClass().getName()).put("message", messageOf(t)).println();
        } finally {
            if (p != null) {
                try {
                    p.close();
                } catch (Throwable ignored) {
                    // closing a refused client
                }
            }
        }
    }

    public static void main(String[] args) throws Exception {
        String endpoints = args[0], topic = args[1], group = args[2];
        int n = Integer.parseInt(args[3]);
        SessionCredentialsProvider alice = new StaticSessionCredentialsProvider("alice", "alice-secret-1");
        try {
            try (Producer producer = P.newProducerBuilder().setClientConfiguration(cfg(endpoints, alice)).setTopics(topic).build()) {
                for (int i = 0; i < n; i++) {
                    SendReceipt r = producer.send(P.newMessageBuilder().setTopic(topic).setKeys("g5-k" + i).setBody(("g5-" + i).getBytes(StandardCharsets.UTF_8)).build());
                    Json.obj().put("type", "sent").put("key", "g5-k" + i).put("messageId", r.getMessageId().toString()).println();
                }
            }
            refusedSend("unsigned", endpoints, topic, null);
            refusedSend("wrongSecret", endpoints, topic, new StaticSessionCredentialsProvider("alice", "not-the-secret"));
            refusedSend("noPubPermission", endpoints, topic, new StaticSessionCredentialsProvider("bob", "bob-secret-1"));
            try (SimpleConsumer other = P.newSimpleConsumerBuilder().setClientConfiguration(cfg(endpoints, alice)).setConsumerGroup(group + "-other")
                .setAwaitDuration(Duration.ofSeconds(1))
                .setSubscriptionExpressions(Collections.singletonMap(topic, new FilterExpression("*", FilterExpressionType.TAG))).build()) {
                List<MessageView> got = other.receive(16, Duration.ofSeconds(30));
                Json.obj().put("type", "unexpected").put("case", "groupNotAllowed").put("count", got.size()).println();
            } catch (Throwable t) {
                Json.obj().put("type", "refused").put("case", "groupNotAllowed").put("class", t.getClass().getName()).put("message", messageOf(t)).println();
            }
            Set<String> seen = new HashSet<>();
            try (SimpleConsumer c = P.newSimpleConsumerBuilder().setClientConfiguration(cfg(endpoints, alice)).setConsumerGroup(group)
                .setAwaitDuration(Duration.ofSeconds(2))
                .setSubscriptionExpressions(Collections.singletonMap(topic, new FilterExpression("*", FilterExpressionType.TAG))).build()) {
                long deadline = System.currentTimeMillis() + 30_000;
                while (System.currentTimeMillis() < deadline && seen.size() < n) {
                    for (MessageView mv : c.receive(16, Duration.ofSeconds(30))) {
                        c.ack(mv);
                        String k = mv.getKeys().isEmpty() ? "" : mv.getKeys().iterator().next();
                        if (k.startsWith("g5-") && seen.add(k)) Json.obj().put("type", "recv").put("key", k).println();
                    }
                }
            }
        } catch (Throwable t) {
            Json.obj().put("type", "error").put("op", "main").put("message", messageOf(t)).println();
        }
        Json.obj().put("type", "end").println();
        System.exit(0);
    }
}
