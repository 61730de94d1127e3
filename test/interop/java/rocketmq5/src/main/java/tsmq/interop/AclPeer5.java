package tsmq.interop;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.tools.command.MQAdminStartup;
import tsmq.interop.common.Json;

/**
 * Apache RocketMQ 5.3.3 client and mqadmin against a tsmq broker with ACL 2.0 on
 * (authenticationEnabled, authorizationEnabled), all in one JVM:
 *
 * <pre>
 *   AclPeer5 &lt;namesrv&gt; &lt;brokerAddr&gt; &lt;adminAk&gt; &lt;adminSk&gt; &lt;topic&gt; &lt;group&gt; &lt;n&gt;
 * </pre>
 * (1) mqadmin (MQAdminStartup.main0 with AclClientRPCHook of the super user): updateTopic, createUser
 * alice (Normal), bob and carol, updateUser carol (disable), createAcl for alice (Topic:T and Group:G, Pub+Sub, Allow) and bob (Topic:T
 * Sub only), getUser, listUser, getAcl, listAcl, an updateAcl, a deleteAcl of one resource;
 * each printed as {"type":"mqadmin","cmd",...,"output"}.
 * (2) sends as alice (n messages) → {"type":"sent"}; (3) refusal cases, each {"type":"refused",
 * "case","code","message"}: unsigned, wrong secret, unknown user, bob (no Pub), alice's body altered
 * after signing (replay), a normal user (alice) running createUser; (4) a push consumer as alice
 * reads the n messages → {"type":"recv"}; (5) carol (disabled by updateUser) is refused, then mqadmin deleteUser carol + listUser. Ends with "end".
 */
public final class AclPeer5 {
    private static String mqadmin(RPCHook hook, String... args) {
        PrintStream real = System.out;
        PrintStream realErr = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try {
            PrintStream both = new PrintStream(captured, true, StandardCharsets.UTF_8);
            System.setOut(both);
            System.setErr(both);
            MQAdminStartup.main0(args, hook);
        } catch (Throwable t) {
            System.setOut(real);
            System.setErr(realErr);
            Json.obj().put("type", "error").put("op", "mqadmin " + args[0]).put("message", String.valueOf(t)).println();
        } finally {
            System.setOut(real);
            System.setErr(realErr);
        }
        String out = captured.toString(StandardCharsets.UTF_8);
        Json.obj().put("type", "mqadmin").put("cmd", args[0]).put("output", out).println();
        return out;
    }

    private static int codeOf(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof MQBrokerException) return ((MQBrokerException) c).getResponseCode();
            if (c instanceof MQClientException && ((MQClientException) c).getResponseCode() > 0) return ((MQClientException) c).getResponseCode();
        }
        return -1;
    }

    private static String messageOf(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) sb.append(c.getMessage()).append(" | ");
        return sb.toString();
    }

    /** One sync send with its own producer; prints "refused" (or "unexpected" when it succeeded). */
    private static void expectRefusedSend(String kase, String namesrv, String topic, RPCHook hook) {
        DefaultMQProducer p = hook == null ? new DefaultMQProducer("PG_" + kase) : new DefaultMQProducer("PG_" + kase, hook);
        p.setNamesrvAddr(namesrv);
        p.setInstanceName("acl-" + kase);
        p.setRetryTimesWhenSendFailed(0);
        p.setSendMsgTimeout(5000);
        try {
            p.start();
            SendResult r = p.send(new Message(topic, "TagA", ("refused-" + kase).getBytes(StandardCharsets.UTF_8)));
            Json.obj().put("type", "unexpected").put("case", kase).put("status", String.valueOf(r.getSendStatus())).println();
        } catch (Throwable t) {
            Json.obj().put("type", "refused").put("case", kase).put("code", codeOf(t)).put("message", messageOf(t)).println();
        } finally {
            p.shutdown();
        }
    }

    /** Signs like AclClientRPCHook, then changes one body byte (a replay with an altered body). */
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
        String namesrv = args[0], broker = args[1], adminAk = args[2], adminSk = args[3], topic = args[4], group = args[5];
        int n = Integer.parseInt(args[6]);
        RPCHook admin = new AclClientRPCHook(new SessionCredentials(adminAk, adminSk));
        RPCHook alice = new AclClientRPCHook(new SessionCredentials("alice", "alice-secret-1"));
        try {
            mqadmin(admin, "updateTopic", "-n", namesrv, "-b", broker, "-t", topic, "-r", "4", "-w", "4");
            mqadmin(admin, "createUser", "-n", namesrv, "-b", broker, "-u", "alice", "-p", "alice-secret-1");
            mqadmin(admin, "createUser", "-n", namesrv, "-b", broker, "-u", "bob", "-p", "bob-secret-1", "-t", "Normal");
            mqadmin(admin, "createUser", "-n", namesrv, "-b", broker, "-u", "carol", "-p", "carol-secret-1");
            mqadmin(admin, "updateUser", "-n", namesrv, "-b", broker, "-u", "carol", "-s", "disable");
            mqadmin(admin, "createAcl", "-n", namesrv, "-b", broker, "-s", "User:alice", "-r", "Topic:" + topic + ",Group:" + group, "-a", "Pub,Sub", "-d", "Allow");
            mqadmin(admin, "createAcl", "-n", namesrv, "-b", broker, "-s", "User:bob", "-r", "Topic:" + topic + ",Topic:Other*", "-a", "Sub", "-d", "Allow", "-i", "127.0.0.1,10.0.0.0/8");
            mqadmin(admin, "updateAcl", "-n", namesrv, "-b", broker, "-s", "User:bob", "-r", "Topic:Other*", "-a", "Get", "-d", "Deny");
            mqadmin(admin, "getUser", "-n", namesrv, "-b", broker, "-u", "alice");
            mqadmin(admin, "listUser", "-n", namesrv, "-b", broker);
            mqadmin(admin, "getAcl", "-n", namesrv, "-b", broker, "-s", "User:bob");
            mqadmin(admin, "deleteAcl", "-n", namesrv, "-b", broker, "-s", "User:bob", "-r", "Topic:Other*");
            mqadmin(admin, "listAcl", "-n", namesrv, "-b", broker);
            // a normal user may not manage users (Cluster Update)
            mqadmin(alice, "createUser", "-n", namesrv, "-b", broker, "-u", "mallory", "-p", "mallory-secret");

            DefaultMQProducer producer = new DefaultMQProducer("PG_alice", alice);
            producer.setNamesrvAddr(namesrv);
            producer.setInstanceName("acl-alice");
            producer.start();
            for (int i = 0; i < n; i++) {
                SendResult r = producer.send(new Message(topic, "TagA", "k" + i, ("acl-" + i).getBytes(StandardCharsets.UTF_8)));
                Json.obj().put("type", "sent").put("key", "k" + i).put("status", String.valueOf(r.getSendStatus())).println();
            }
            producer.shutdown();

            expectRefusedSend("unsigned", namesrv, topic, null);
            expectRefusedSend("wrongSecret", namesrv, topic, new AclClientRPCHook(new SessionCredentials("alice", "not-the-secret")));
            expectRefusedSend("unknownUser", namesrv, topic, new AclClientRPCHook(new SessionCredentials("nobody", "whatever-secret")));
            expectRefusedSend("noPubPermission", namesrv, topic, new AclClientRPCHook(new SessionCredentials("bob", "bob-secret-1")));
            expectRefusedSend("alteredBody", namesrv, topic, new TamperingHook(new SessionCredentials("alice", "alice-secret-1")));

            Set<String> got = ConcurrentHashMap.newKeySet();
            DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group, alice);
            consumer.setNamesrvAddr(namesrv);
            consumer.setInstanceName("acl-consumer");
            consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            consumer.subscribe(topic, "*");
            consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
                for (MessageExt m : msgs) {
                    if (got.add(m.getKeys())) Json.obj().put("type", "recv").put("key", m.getKeys()).println();
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
            consumer.start();
            long deadline = System.currentTimeMillis() + 30_000;
            while (got.size() < n && System.currentTimeMillis() < deadline) Thread.sleep(100);
            consumer.shutdown();

            expectRefusedSend("disabledUser", namesrv, topic, new AclClientRPCHook(new SessionCredentials("carol", "carol-secret-1")));
            mqadmin(admin, "deleteUser", "-n", namesrv, "-b", broker, "-u", "carol");
            mqadmin(admin, "listUser", "-n", namesrv, "-b", broker);
        } catch (Throwable t) {
            Json.obj().put("type", "error").put("op", "main").put("message", messageOf(t)).println();
        }
        Json.obj().put("type", "end").println();
        System.exit(0);
    }
}
