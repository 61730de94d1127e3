package tsmq.interop;

import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import tsmq.interop.common.Json;

/**
 * Apache RocketMQ 4.9.8 client with AclClientRPCHook against a tsmq broker with ACL 2.0 on. The
 * users exist already (created by AclPeer5 through mqadmin): alice (Pub+Sub on topic T and group
 * G), bob (Sub on T only).
 *
 * <pre>
 *   AclPeer4 &lt;namesrv&gt; &lt;topic&gt; &lt;group&gt; &lt;n&gt;
 * </pre>
 * Sends n messages as alice ("sent", keys v4-k0..), the refusal cases ("refused": unsigned,
 * wrongSecret, noPubPermission (bob), alteredBody) and consumes the n messages as alice in G
 * ("recv"). Ends with "end".
 */
public final class AclPeer4 {
    private static void expectRefusedSend(String kase, String namesrv, String topic, RPCHook hook) {
        DefaultMQProducer p = new DefaultMQProducer("PG4_" + kase, hook);
        p.setNamesrvAddr(namesrv);
        p.setInstanceName("acl4-" + kase);
        p.setRetryTimesWhenSendFailed(0);
        try {
            p.start();
            SendResult r = p.send(new Message(topic, "TagA", ("refused-" + kase).getBytes(StandardCharsets.UTF_8)));
            Json.obj().put("type", "unexpected").put("case", kase).put("status", String.valueOf(r.getSendStatus())).println();
        } catch (Throwable t) {
            Json.obj().put("type", "refused").put("case", kase).put("code", ClientErrors.codeOf(t)).put("message", ClientErrors.messageOf(t)).println();
        } finally {
            p.shutdown();
        }
    }

    static final class TamperingHook extends AclClientRPCHook {
        TamperingHook(SessionCredentials c) {
            super(c);
        }

        @Override
        public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
            super.doBeforeRequest(remoteAddr, request);
            byte[] body = request.getBody();
            if ((request.getCode() == 10 || request.getCode() == 310) && body != null && body.length > 0) {
                byte[] copy = body.clone();
                copy[0] ^= 0x01;
                request.setBody(copy);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        String namesrv = args[0], topic = args[1], group = args[2];
        int n = Integer.parseInt(args[3]);
        RPCHook alice = new AclClientRPCHook(new SessionCredentials("alice", "alice-secret-1"));
        try {
            DefaultMQProducer producer = new DefaultMQProducer("PG4_alice", alice);
            producer.setNamesrvAddr(namesrv);
            producer.setInstanceName("acl4-alice");
            producer.start();
            for (int i = 0; i < n; i++) {
                SendResult r = producer.send(new Message(topic, "TagA", "v4-k" + i, ("acl4-" + i).getBytes(StandardCharsets.UTF_8)));
                Json.obj().put("type", "sent").put("key", "v4-k" + i).put("status", String.valueOf(r.getSendStatus())).println();
            }
            producer.shutdown();

            expectRefusedSend("unsigned", namesrv, topic, null);
            expectRefusedSend("wrongSecret", namesrv, topic, new AclClientRPCHook(new SessionCredentials("alice", "not-the-secret")));
            expectRefusedSend("noPubPermission", namesrv, topic, new AclClientRPCHook(new SessionCredentials("bob", "bob-secret-1")));
            expectRefusedSend("alteredBody", namesrv, topic, new TamperingHook(new SessionCredentials("alice", "alice-secret-1")));

            Set<String> got = ConcurrentHashMap.newKeySet();
            DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group, alice, new AllocateMessageQueueAveragely());
            consumer.setNamesrvAddr(namesrv);
            consumer.setInstanceName("acl4-consumer");
            consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            consumer.subscribe(topic, "*");
            consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
                for (MessageExt m : msgs) {
                    String k = m.getKeys();
                    if (k != null && k.startsWith("v4-") && got.add(k)) Json.obj().put("type", "recv").put("key", k).println();
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
            consumer.start();
            long deadline = System.currentTimeMillis() + 30_000;
            while (got.size() < n && System.currentTimeMillis() < deadline) Thread.sleep(100);
            consumer.shutdown();
        } catch (Throwable t) {
            Json.obj().put("type", "error").put("op", "main").put("message", ClientErrors.messageOf(t)).println();
        }
        Json.obj().put("type", "end").println();
        System.exit(0);
    }
}
