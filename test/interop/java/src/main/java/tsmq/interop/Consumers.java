package tsmq.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;
import tsmq.interop.common.Json;

/** lite-pull and push consumer scenarios of ClientPeer. */
final class Consumers {
    static final AtomicInteger ROUND = new AtomicInteger(1);

    static void printRecv(String who, MessageExt m) {
        String body = new String(m.getBody(), StandardCharsets.UTF_8);
        Json.obj().put("type", "recv").put("round", ROUND.get()).put("consumer", who).put("key", m.getKeys()).put("tags", m.getTags())
            .put("queueId", m.getQueueId()).put("queueOffset", m.getQueueOffset()).put("msgId", m.getMsgId())
            .put("reconsumeTimes", m.getReconsumeTimes()).put("bornTimestamp", m.getBornTimestamp())
            .put("storeTimestamp", m.getStoreTimestamp()).put("commitLogOffset", m.getCommitLogOffset()).put("storeSize", m.getStoreSize())
            .put("at", System.currentTimeMillis())
            .put("bodyOk", body.equals("body-" + m.getKeys())).put("thread", Thread.currentThread().getName()).println();
    }

    static void litePull(String namesrv, Opts o, RecordingHook hook) throws Exception {
        DefaultLitePullConsumer c = new DefaultLitePullConsumer(o.req("group"), hook);
        c.setNamesrvAddr(namesrv);
        c.setInstanceName("iop-lite-" + System.nanoTime());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setAutoCommit(false);
        c.setPollTimeoutMillis(1000);
        String sql = o.str("sql", null);
        if (sql != null) c.subscribe(o.req("topic"), MessageSelector.bySql(sql));
        else c.subscribe(o.req("topic"), o.str("expr", "*"));
        c.start();
        int expect = o.num("expect", 1);
        long deadline = System.currentTimeMillis() + o.lng("timeoutMs", 30000);
        long idleMs = o.lng("idleMs", 1500);
        Set<String> keys = ConcurrentHashMap.newKeySet();
        long lastNew = System.currentTimeMillis();
        int total = 0;
        while (System.currentTimeMillis() < deadline) {
            List<MessageExt> got = c.poll(1000);
            for (MessageExt m : got) {
                printRecv("lite", m);
                total++;
                if (keys.add(m.getKeys())) lastNew = System.currentTimeMillis();
            }
            if (!got.isEmpty()) c.commitSync();
            if (keys.size() >= expect && System.currentTimeMillis() - lastNew > idleMs) break;
        }
        c.commitSync();
        c.shutdown();
        Json.obj().put("type", "summary").put("distinctKeys", keys.size()).put("received", total).println();
    }

    static void push(String namesrv, Opts o, RecordingHook hook) throws Exception {
        String group = o.req("group");
        String topic = o.req("topic");
        String expr = o.str("expr", "*");
        String sql = o.str("sql", null); // MessageSelector.bySql instead of a tag expression
        MessageModel model = MessageModel.valueOf(o.str("model", "CLUSTERING"));
        boolean orderly = o.str("mode", "concurrently").equals("orderly");
        int instances = o.num("instances", 1);
        int expect = o.num("expect", 1);
        long deadline = System.currentTimeMillis() + o.lng("timeoutMs", 30000);
        long idleMs = o.lng("idleMs", 1500);
        int failFirst = o.num("failFirst", 0); // return RECONSUME_LATER/SUSPEND for the first n deliveries
        List<DefaultMQPushConsumer> consumers = new ArrayList<>();
        Set<String> keys = ConcurrentHashMap.newKeySet(); // "consumer|key"
        Set<String> distinctKeys = ConcurrentHashMap.newKeySet();
        AtomicInteger total = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        AtomicLong lastNew = new AtomicLong(System.currentTimeMillis());
        for (int k = 0; k < instances; k++) {
            final String who = "c" + k;
            DefaultMQPushConsumer c = new DefaultMQPushConsumer(group, hook, new AllocateMessageQueueAveragely());
            c.setNamesrvAddr(namesrv);
            c.setInstanceName("iop-push-" + who + "-" + System.nanoTime());
            c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            c.setMessageModel(model);
            c.setPersistConsumerOffsetInterval(1000);
            c.setConsumeThreadMin(2);
            c.setConsumeThreadMax(4);
            if (sql != null) c.subscribe(topic, MessageSelector.bySql(sql));
            else c.subscribe(topic, expr);
            if (orderly) {
                c.registerMessageListener((MessageListenerOrderly) (msgs, ctx) -> {
                    for (MessageExt m : msgs) {
                        if (claimFailure(failed, failFirst)) {
                            Json.obj().put("type", "fail").put("consumer", who).put("key", m.getKeys()).println();
                            return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT;
                        }
                        printRecv(who, m);
                        total.incrementAndGet();
                        distinctKeys.add(m.getKeys());
                        if (keys.add(who + "|" + m.getKeys())) lastNew.set(System.currentTimeMillis());
                    }
                    return ConsumeOrderlyStatus.SUCCESS;
                });
            } else {
                c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                    for (MessageExt m : msgs) {
                        if (m.getReconsumeTimes() == 0 && claimFailure(failed, failFirst)) {
                            Json.obj().put("type", "fail").put("consumer", who).put("key", m.getKeys()).println();
                            return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                        }
                    }
                    for (MessageExt m : msgs) {
                        printRecv(who, m);
                        total.incrementAndGet();
                        distinctKeys.add(m.getKeys());
                        if (keys.add(who + "|" + m.getKeys())) lastNew.set(System.currentTimeMillis());
                    }
                    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
                });
            }
            c.start();
            consumers.add(c);
        }
        // expect = distinct keys (CLUSTERING) or keys per consumer instance (BROADCASTING)
        while (System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
            boolean enough = model == MessageModel.BROADCASTING ? keys.size() >= expect * instances : distinctKeys.size() >= expect;
            if (enough && System.currentTimeMillis() - lastNew.get() > idleMs) break;
        }
        long resetTs = o.lng("resetTs", -1);
        if (resetTs >= 0) {
            // reset the group's offsets by time while it is online (INVOKE_BROKER_TO_RESET_OFFSET 222,
            // the broker then pushes RESET_CONSUMER_CLIENT_OFFSET 220 to the consumers): all is consumed again
            // the broker answers "THe consumer group <G> not exist" while a queue has no committed offset
            // (Apache does too), and the client's periodic offset persist starts only 10 s after start:
            // commit now (UPDATE_CONSUMER_OFFSET 15, oneway) and give the broker a moment
            for (DefaultMQPushConsumer c : consumers) c.getDefaultMQPushConsumerImpl().persistConsumerOffset();
            Thread.sleep(1000);
            ROUND.set(2);
            keys.clear();
            distinctKeys.clear();
            lastNew.set(System.currentTimeMillis());
            org.apache.rocketmq.tools.admin.DefaultMQAdminExt admin = new org.apache.rocketmq.tools.admin.DefaultMQAdminExt(hook, 5000);
            admin.setNamesrvAddr(namesrv);
            admin.setInstanceName("iop-admin-" + System.nanoTime());
            admin.start();
            try {
                java.util.Map<org.apache.rocketmq.common.message.MessageQueue, Long> r = admin.resetOffsetByTimestamp(topic, group, resetTs, true);
                java.util.Map<String, Long> out = new java.util.TreeMap<>();
                r.forEach((mq, off) -> out.put(mq.getTopic() + "/" + mq.getQueueId(), off));
                Json.obj().put("type", "admin").put("op", "resetOffsetByTimestamp(online)").put("offsets", out).println();
            } catch (Throwable t) {
                Errors.print("resetOffsetByTimestamp(online)", t);
            }
            admin.shutdown();
            long deadline2 = System.currentTimeMillis() + o.lng("timeoutMs", 30000);
            while (System.currentTimeMillis() < deadline2) {
                Thread.sleep(100);
                if (distinctKeys.size() >= expect && System.currentTimeMillis() - lastNew.get() > idleMs) break;
                // the 4.9.8 client pauses the group for 10 s when it gets 220 (MQClientInstance.resetOffset)
                // before it takes the new offsets: give up only when nothing came back 16 s after the reset
                if (distinctKeys.isEmpty() && System.currentTimeMillis() - lastNew.get() > 16000) break;
            }
        }
        Thread.sleep(1200); // let offsets be persisted (persistConsumerOffsetInterval 1 s)
        for (DefaultMQPushConsumer c : consumers) c.shutdown();
        Json.obj().put("type", "summary").put("distinct", distinctKeys.size()).put("perConsumerKeys", keys.size()).put("received", total.get()).put("failed", failed.get()).println();
    }

    /** Atomically takes one of the first `limit` failure slots (consume threads run concurrently). */
    private static boolean claimFailure(AtomicInteger failed, int limit) {
        for (;;) {
            int n = failed.get();
            if (n >= limit) return false;
            if (failed.compareAndSet(n, n + 1)) return true;
        }
    }
}
