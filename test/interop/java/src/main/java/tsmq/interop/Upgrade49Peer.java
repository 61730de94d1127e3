package tsmq.interop;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
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
import org.apache.rocketmq.remoting.RPCHook;
import tsmq.interop.common.Json;

/**
 * An application of a RocketMQ 4.9 installation with ACL 1.0, as Apache 4.9.8's client runs it
 * (AclClientRPCHook), for the upgrade of its broker to tsmq. Steps, run in order:
 * <pre>
 *   Upgrade49Peer &lt;namesrv&gt; &lt;step&gt; …
 *   send &lt;ak&gt; &lt;sk&gt; &lt;topic&gt; &lt;prefix&gt; &lt;n&gt; &lt;delayLevel&gt;   "sent" {key,status} or "refused" {key,code,message}
 *   consume &lt;ak&gt; &lt;sk&gt; &lt;group&gt; &lt;topic&gt; &lt;retryKeys,…|-&gt; &lt;retryDelayLevel&gt; &lt;expect&gt; &lt;timeoutMs&gt;
 *       push consumer (CONSUME_FROM_FIRST_OFFSET, one thread) until &lt;expect&gt; deliveries or the
 *       timeout, then shutdown (offsets committed); a key of retryKeys delivered with
 *       reconsumeTimes 0 is answered RECONSUME_LATER with that delay level: "recv" {key,reconsumeTimes,delay (the DELAY property, "null" when absent),bornMs,nowMs}
 * </pre>
 * Steps are separated by "--"; "ak" "-" sends without credentials. Ends with "end".
 */
public final class Upgrade49Peer {
    private static RPCHook hook(String ak, String sk) {
        return "-".equals(ak) ? null : new AclClientRPCHook(new SessionCredentials(ak, sk));
    }

    private static void send(String namesrv, String[] a) throws MQClientException {
        String prefix = a[4];
        DefaultMQProducer p = new DefaultMQProducer("PG_UP49_" + prefix, hook(a[1], a[2]));
        p.setNamesrvAddr(namesrv);
        p.setInstanceName("up49-p-" + prefix);
        p.setRetryTimesWhenSendFailed(0);
        p.start();
        try {
            int n = Integer.parseInt(a[5]);
            int delayLevel = Integer.parseInt(a[6]);
            for (int i = 0; i < n; i++) {
                String key = prefix + i;
                Message m = new Message(a[3], "TagA", key, ("up49-" + key).getBytes(StandardCharsets.UTF_8));
                if (delayLevel > 0) m.setDelayTimeLevel(delayLevel);
                try {
                    SendResult r = p.send(m);
                    Json.obj().put("type", "sent").put("key", key).put("status", String.valueOf(r.getSendStatus())).println();
                } catch (Throwable t) {
                    Json.obj().put("type", "refused").put("key", key).put("code", ClientErrors.codeOf(t)).put("message", ClientErrors.messageOf(t)).println();
                }
            }
        } finally {
            p.shutdown();
        }
    }

    private static void consume(String namesrv, String[] a) throws Exception {
        String group = a[3];
        Set<String> retryKeys = new HashSet<>("-".equals(a[5]) ? Arrays.asList() : Arrays.asList(a[5].split(",")));
        int retryDelayLevel = Integer.parseInt(a[6]);
        int expect = Integer.parseInt(a[7]);
        long timeoutMs = Long.parseLong(a[8]);
        Set<String> seen = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group, hook(a[1], a[2]), new AllocateMessageQueueAveragely());
        c.setNamesrvAddr(namesrv);
        c.setInstanceName("up49-c-" + group);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setConsumeThreadMin(1);
        c.setConsumeThreadMax(1);
        c.setConsumeMessageBatchMaxSize(1);
        c.subscribe(a[4], "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            MessageExt m = msgs.get(0);
            Json.obj().put("type", "recv").put("key", m.getKeys()).put("reconsumeTimes", m.getReconsumeTimes()).put("delay", String.valueOf(m.getProperty("DELAY"))).put("bornMs", m.getBornTimestamp()).put("nowMs", System.currentTimeMillis()).println();
            seen.add(m.getKeys() + "#" + m.getReconsumeTimes());
            if (retryKeys.contains(m.getKeys()) && m.getReconsumeTimes() == 0) {
                ctx.setDelayLevelWhenNextConsume(retryDelayLevel);
                return ConsumeConcurrentlyStatus.RECONSUME_LATER;
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (seen.size() < expect && System.currentTimeMillis() < deadline) Thread.sleep(100);
        Thread.sleep(300); // let the last consume result be acknowledged before shutdown commits the offsets
        c.shutdown();
    }

    public static void main(String[] args) {
        String namesrv = args[0];
        try {
            int i = 1;
            while (i < args.length) {
                int j = i;
                while (j < args.length && !"--".equals(args[j])) j++;
                String[] step = Arrays.copyOfRange(args, i, j);
                if ("send".equals(step[0])) send(namesrv, step);
                else if ("consume".equals(step[0])) consume(namesrv, step);
                else throw new IllegalArgumentException("unknown step " + step[0]);
                i = j + 1;
            }
        } catch (Throwable t) {
            Json.obj().put("type", "error").put("message", ClientErrors.messageOf(t)).println();
        }
        Json.obj().put("type", "end").println();
        System.exit(0);
    }
}
