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
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.PlainAccessConfig;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import tsmq.interop.common.Json;

/**
 * Apache RocketMQ 4.9.8 clients with AclClientRPCHook, credentials as a 4.9 application has them
 * for its plain_acl.yml accounts, against a tsmq broker that migrated that file to ACL 2.0.
 *
 * <pre>
 *   AclV1Peer4 &lt;namesrv&gt; &lt;n&gt; &lt;case&gt;=&lt;ak&gt;:&lt;sk&gt;:&lt;topic&gt;[:&lt;group&gt;] …
 * </pre>
 * A case named {@code ok-*} sends n messages (keys &lt;case&gt;-k0..) and, when a group is given,
 * consumes them with a push consumer ("sent", "recv"); any other case sends one message and must be
 * refused ("refused" with code and message, or "unexpected"). A case named {@code v1admin-*} with
 * fields &lt;ak&gt;:&lt;sk&gt;:&lt;host&gt;:&lt;port&gt; sends 4.9.8 mqadmin's updateAclConfig
 * (DefaultMQAdminExt.createAndUpdatePlainAccessConfig, UPDATE_AND_CREATE_ACL_CONFIG 50) to that
 * broker ("refused" or "unexpected"). Ends with "end".
 */
public final class AclV1Peer4 {
    private static DefaultMQProducer producer(String namesrv, String kase, RPCHook hook) throws MQClientException {
        DefaultMQProducer p = new DefaultMQProducer("PGV1_" + kase, hook);
        p.setNamesrvAddr(namesrv);
        p.setInstanceName("aclv1-" + kase);
        p.setRetryTimesWhenSendFailed(0);
        p.start();
        return p;
    }

    private static void okCase(String namesrv, int n, String kase, RPCHook hook, String topic, String group) throws Exception {
        DefaultMQProducer p = producer(namesrv, kase, hook);
        try {
            for (int i = 0; i < n; i++) {
                String key = kase + "-k" + i;
                SendResult r = p.send(new Message(topic, "TagA", key, ("v1-" + i).getBytes(StandardCharsets.UTF_8)));
                Json.obj().put("type", "sent").put("case", kase).put("key", key).put("status", String.valueOf(r.getSendStatus())).println();
            }
        } finally {
            p.shutdown();
        }
        if (group == null) return;
        Set<String> got = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group, hook, new AllocateMessageQueueAveragely());
        consumer.setNamesrvAddr(namesrv);
        consumer.setInstanceName("aclv1-consumer-" + kase);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
            for (MessageExt m : msgs) {
                String k = m.getKeys();
                if (k != null && k.startsWith(kase + "-") && got.add(k)) Json.obj().put("type", "recv").put("case", kase).put("key", k).println();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        long deadline = System.currentTimeMillis() + 30_000;
        while (got.size() < n && System.currentTimeMillis() < deadline) Thread.sleep(100);
        consumer.shutdown();
    }

    private static void refusedCase(String namesrv, String kase, RPCHook hook, String topic) {
        DefaultMQProducer p = null;
        try {
            p = producer(namesrv, kase, hook);
            SendResult r = p.send(new Message(topic, "TagA", ("refused-" + kase).getBytes(StandardCharsets.UTF_8)));
            Json.obj().put("type", "unexpected").put("case", kase).put("status", String.valueOf(r.getSendStatus())).println();
        } catch (Throwable t) {
            Json.obj().put("type", "refused").put("case", kase).put("code", ClientErrors.codeOf(t)).put("message", ClientErrors.messageOf(t)).println();
        } finally {
            if (p != null) p.shutdown();
        }
    }

    private static void v1AdminCase(String kase, RPCHook hook, String brokerAddr) {
        DefaultMQAdminExt admin = new DefaultMQAdminExt(hook, 10_000);
        admin.setInstanceName("aclv1-admin-" + kase);
        try {
            admin.start();
            PlainAccessConfig c = new PlainAccessConfig();
            c.setAccessKey("newAccount");
            c.setSecretKey("newAccount-secret");
            c.setDefaultTopicPerm("PUB|SUB");
            admin.createAndUpdatePlainAccessConfig(brokerAddr, c);
            Json.obj().put("type", "unexpected").put("case", kase).put("status", "updateAclConfig accepted").println();
        } catch (Throwable t) {
            Json.obj().put("type", "refused").put("case", kase).put("code", ClientErrors.codeOf(t)).put("message", ClientErrors.messageOf(t)).println();
        } finally {
            admin.shutdown();
        }
    }

    public static void main(String[] args) {
        String namesrv = args[0];
        int n = Integer.parseInt(args[1]);
        try {
            for (int i = 2; i < args.length; i++) {
                String kase = args[i].substring(0, args[i].indexOf('='));
                String[] f = args[i].substring(kase.length() + 1).split(":");
                RPCHook hook = new AclClientRPCHook(new SessionCredentials(f[0], f[1]));
                if (kase.startsWith("v1admin-")) v1AdminCase(kase, hook, f[2] + ":" + f[3]);
                else if (kase.startsWith("ok-")) okCase(namesrv, n, kase, hook, f[2], f.length > 3 ? f[3] : null);
                else refusedCase(namesrv, kase, hook, f[2]);
            }
        } catch (Throwable t) {
            Json.obj().put("type", "error").put("op", "main").put("message", ClientErrors.messageOf(t)).println();
        }
        Json.obj().put("type", "end").println();
        System.exit(0);
    }
}
