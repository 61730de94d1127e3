package tsmq.interop.rocketmq5;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.MessageQueueSelector;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import tsmq.interop.common.Json;

/**
 * Apache RocketMQ 5.3.3 remoting client peer for the broker migration test (Apache broker ↔ tsmq
 * broker on one store directory):
 *
 * <pre>
 *   MigrationPeer produce &lt;namesrv&gt; topic=T n=N orderTopic=O orderN=M delayN=D delayLevel=L timerN=K timerDelayMs=X prefix=p
 *   MigrationPeer half    &lt;namesrv&gt; topic=T group=PID prefix=p
 *   MigrationPeer consume &lt;namesrv&gt; topics=T,O group=G max=M expect=E [need=k1,k2] idleMs=I timeoutMs=X [txnGroup=PID]
 * </pre>
 * produce: N messages to T (keys p-i, tags TagA/TagB), M to O through a queue selector (keys
 * p-o-i, order id i%4 → queue), D with delay level L (keys p-d-i), K with setDeliverTimeMs(now+X)
 * (keys p-t-i); prints "sent" lines (key, msgId, offsetMsgId, queueId, queueOffset, topic).
 * half: one transactional message (key p-half) whose local transaction answers UNKNOW, then exits.
 * consume: a push consumer (one consume thread, one message per call, so offsets committed at
 * shutdown are exact; past max a message is held, never acknowledged) on the topics; stops when max messages were consumed, or when at least
 * expect distinct keys (and every key of need) arrived and nothing new came for idleMs, or at timeoutMs; with txnGroup a
 * TransactionMQProducer of that group (after sending one message to pingTopic, default MigPing, so that its
 * client heartbeats the broker; ping=0 skips it) answers the broker's check-back with COMMIT ("checked").
 * Prints "recv" lines and an "end" line.
 */
public final class MigrationPeer {
    public static void main(String[] args) throws Exception {
        String mode = args[0];
        String namesrv = args[1];
        Map<String, String> o = new HashMap<>();
        for (int i = 2; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            o.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        try {
            switch (mode) {
                case "produce": produce(namesrv, o); break;
                case "half": half(namesrv, o); break;
                case "consume": consume(namesrv, o); break;
                default: throw new IllegalArgumentException("unknown mode " + mode);
            }
        } catch (Throwable t) {
            Json.obj().put("type", "error").put("error", String.valueOf(t)).println();
            t.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    private static void sent(String key, SendResult r) {
        Json.obj().put("type", "sent").put("key", key).put("status", String.valueOf(r.getSendStatus())).put("msgId", r.getMsgId())
            .put("offsetMsgId", r.getOffsetMsgId()).put("topic", r.getMessageQueue().getTopic()).put("queueId", r.getMessageQueue().getQueueId())
            .put("queueOffset", r.getQueueOffset()).println();
    }

    private static void produce(String namesrv, Map<String, String> o) throws Exception {
        String topic = o.get("topic");
        String prefix = o.getOrDefault("prefix", "m");
        int n = Integer.parseInt(o.getOrDefault("n", "100"));
        DefaultMQProducer p = new DefaultMQProducer(o.getOrDefault("group", "PID_MIG"));
        p.setNamesrvAddr(namesrv);
        p.setSendMsgTimeout(15000);
        p.start();
        try {
            for (int i = 0; i < n; i++) {
                String key = prefix + "-" + i;
                Message m = new Message(topic, i % 2 == 0 ? "TagA" : "TagB", key, ("body-" + key).getBytes(StandardCharsets.UTF_8));
                sent(key, p.send(m));
            }
            String orderTopic = o.get("orderTopic");
            int orderN = Integer.parseInt(o.getOrDefault("orderN", "0"));
            MessageQueueSelector byOrderId = (List<MessageQueue> mqs, Message msg, Object arg) -> mqs.get((Integer) arg % mqs.size());
            for (int i = 0; i < orderN; i++) {
                String key = prefix + "-o-" + i;
                Message m = new Message(orderTopic, "TagO", key, ("body-" + key).getBytes(StandardCharsets.UTF_8));
                sent(key, p.send(m, byOrderId, i % 4));
            }
            int delayN = Integer.parseInt(o.getOrDefault("delayN", "0"));
            int level = Integer.parseInt(o.getOrDefault("delayLevel", "3"));
            for (int i = 0; i < delayN; i++) {
                String key = prefix + "-d-" + i;
                Message m = new Message(topic, "TagD", key, ("body-" + key).getBytes(StandardCharsets.UTF_8));
                m.setDelayTimeLevel(level);
                sent(key, p.send(m));
            }
            int timerN = Integer.parseInt(o.getOrDefault("timerN", "0"));
            long delayMs = Long.parseLong(o.getOrDefault("timerDelayMs", "60000"));
            long deliverMs = System.currentTimeMillis() + delayMs;
            for (int i = 0; i < timerN; i++) {
                String key = prefix + "-t-" + i;
                Message m = new Message(topic, "TagT", key, ("body-" + key).getBytes(StandardCharsets.UTF_8));
                m.setDeliverTimeMs(deliverMs);
                sent(key, p.send(m));
            }
            Json.obj().put("type", "end").put("timerDeliverMs", deliverMs).println();
        } finally {
            p.shutdown();
        }
    }

    private static void half(String namesrv, Map<String, String> o) throws Exception {
        String key = o.getOrDefault("prefix", "m") + "-half";
        TransactionMQProducer p = new TransactionMQProducer(o.getOrDefault("group", "PID_MIG_TXN"));
        p.setNamesrvAddr(namesrv);
        p.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                return LocalTransactionState.UNKNOW;
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                return LocalTransactionState.UNKNOW;
            }
        });
        p.start();
        try {
            Message m = new Message(o.get("topic"), "TagH", key, ("body-" + key).getBytes(StandardCharsets.UTF_8));
            SendResult r = p.sendMessageInTransaction(m, null);
            Json.obj().put("type", "half").put("key", key).put("status", String.valueOf(r.getSendStatus())).put("msgId", r.getMsgId())
                .put("transactionId", r.getTransactionId()).println();
        } finally {
            p.shutdown();
        }
    }

    private static void consume(String namesrv, Map<String, String> o) throws Exception {
        int max = Integer.parseInt(o.getOrDefault("max", "1000000000"));
        int expect = Integer.parseInt(o.getOrDefault("expect", "0"));
        long idleMs = Long.parseLong(o.getOrDefault("idleMs", "3000"));
        long timeoutMs = Long.parseLong(o.getOrDefault("timeoutMs", "60000"));
        Set<String> keys = ConcurrentHashMap.newKeySet();
        Set<String> need = new java.util.HashSet<>();
        if (o.containsKey("need")) for (String k : o.get("need").split(",")) if (!k.isEmpty()) need.add(k);
        AtomicInteger consumed = new AtomicInteger();
        AtomicLong lastNewMs = new AtomicLong(System.currentTimeMillis());
        TransactionMQProducer checker = null;
        String txnGroup = o.get("txnGroup");
        if (txnGroup != null) {
            checker = new TransactionMQProducer(txnGroup);
            checker.setNamesrvAddr(namesrv);
            checker.setTransactionListener(new TransactionListener() {
                @Override
                public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                    return LocalTransactionState.UNKNOW;
                }

                @Override
                public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                    Json.obj().put("type", "checked").put("key", msg.getKeys()).put("at", System.currentTimeMillis())
                        .put("transactionId", msg.getTransactionId()).println();
                    return LocalTransactionState.COMMIT_MESSAGE;
                }
            });
            checker.start();
            // a producer that never sends has no broker address, so its client instance never sends
            // a heartbeat and the broker has nobody to check with: send one message, as an application
            // restarted after a crash would
            if (!"0".equals(o.get("ping"))) checker.send(new Message(o.getOrDefault("pingTopic", "MigPing"), "TagP", "ping", "ping".getBytes(StandardCharsets.UTF_8)));
        }
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(o.get("group"));
        c.setNamesrvAddr(namesrv);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setConsumeThreadMin(1);
        c.setConsumeThreadMax(1);
        c.setConsumeMessageBatchMaxSize(1);
        c.setPullBatchSize(32);
        for (String t : o.get("topics").split(",")) c.subscribe(t, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            long now = System.currentTimeMillis();
            for (MessageExt m : msgs) {
                while (consumed.get() >= max) {
                    // past max: hold the message unconsumed (its offset is not committed); the JVM exits after shutdown
                    try { Thread.sleep(1000); } catch (InterruptedException e) { /* keep holding */ }
                }
                consumed.incrementAndGet();
                if (keys.add(m.getKeys())) lastNewMs.set(now);
                Json.obj().put("type", "recv").put("key", m.getKeys()).put("topic", m.getTopic()).put("queueId", m.getQueueId())
                    .put("queueOffset", m.getQueueOffset()).put("msgId", m.getMsgId()).put("tags", m.getTags())
                    .put("reconsumeTimes", m.getReconsumeTimes()).put("storeTimestamp", m.getStoreTimestamp()).put("at", now)
                    .put("deliverMs", m.getProperty("TIMER_DELIVER_MS")).put("bornTimestamp", m.getBornTimestamp())
                    .put("body", new String(m.getBody(), StandardCharsets.UTF_8)).println();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        long deadline = System.currentTimeMillis() + timeoutMs;
        String why = "timeout";
        while (System.currentTimeMillis() < deadline) {
            if (consumed.get() >= max) { why = "max"; break; }
            if (expect > 0 && keys.size() >= expect && keys.containsAll(need) && System.currentTimeMillis() - lastNewMs.get() >= idleMs) { why = "expect"; break; }
            Thread.sleep(100);
        }
        c.shutdown();
        if (checker != null) checker.shutdown();
        Json.obj().put("type", "end").put("why", why).put("consumed", consumed.get()).put("distinct", keys.size()).println();
    }
}
