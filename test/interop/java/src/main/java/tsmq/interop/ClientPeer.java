package tsmq.interop;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageQueue;
import tsmq.interop.common.Json;

/**
 * Apache RocketMQ 4.9.8 client peer for tsmq's client interop test. One JVM per scenario:
 *
 * <pre>
 *   ClientPeer &lt;namesrv&gt; produce  topic=T n=20 orderIds=3 perOrder=10 delayLevel=1 group=G queueNums=4 (defaultTopicQueueNums)
 *   ClientPeer &lt;namesrv&gt; produce-props topic=T n=20 group=G   (user property a=i, tag T2 if i%3==0 else T1, key sql-i)
 *   ClientPeer &lt;namesrv&gt; lite-pull topic=T group=G expr=* | sql=SELECTOR expect=N timeoutMs=30000
 *   ClientPeer &lt;namesrv&gt; push topic=T group=G expr=* | sql=SELECTOR model=CLUSTERING|BROADCASTING mode=concurrently|orderly
 *                              instances=1 expect=N timeoutMs=30000 idleMs=1500
 *   ClientPeer &lt;namesrv&gt; admin topic=T group=G newTopic=T2 key=K offsetMsgId=.. uniqMsgId=.. resetTs=..
 * </pre>
 * Output: JSON lines ("sent", "recv", "admin", "error", "rpc", "summary"). Exit code 0 unless the
 * program itself broke; failures of tsmq are reported as "error" lines.
 */
public final class ClientPeer {
    public static void main(String[] args) throws Exception {
        String namesrv = args[0];
        String cmd = args[1];
        Opts o = new Opts(args, 2);
        RecordingHook hook = new RecordingHook();
        try {
            switch (cmd) {
                case "produce": produce(namesrv, o, hook); break;
                case "produce-props": produceProps(namesrv, o, hook); break;
                case "lite-pull": Consumers.litePull(namesrv, o, hook); break;
                case "push": Consumers.push(namesrv, o, hook); break;
                case "admin": Admin.run(namesrv, o, hook); break;
                default: throw new IllegalArgumentException("unknown command " + cmd);
            }
        } catch (Throwable t) {
            Errors.print(cmd, t);
        }
        hook.print(cmd);
        Json.obj().put("type", "end").put("cmd", cmd).println();
        System.exit(0);
    }

    static void printSent(String mode, String key, SendResult r) {
        Json.obj().put("type", "sent").put("mode", mode).put("key", key).put("status", r.getSendStatus().name())
            .put("msgId", r.getMsgId()).put("offsetMsgId", r.getOffsetMsgId())
            .put("brokerName", r.getMessageQueue().getBrokerName()).put("queueId", r.getMessageQueue().getQueueId())
            .put("queueOffset", r.getQueueOffset()).println();
    }

    static Message msg(String topic, String tags, String key) {
        return new Message(topic, tags, key, ("body-" + key).getBytes(StandardCharsets.UTF_8));
    }

    /** n sync sends, message i: user property a=i, tag T2 when i % 3 == 0 else T1, key sql-i. */
    static void produceProps(String namesrv, Opts o, RecordingHook hook) throws Exception {
        String topic = o.req("topic");
        int n = o.num("n", 20);
        DefaultMQProducer p = new DefaultMQProducer(o.str("group", "PID_IOP_SQL"), hook);
        p.setNamesrvAddr(namesrv);
        p.setInstanceName("iop-producer-props-" + System.nanoTime());
        p.setSendMsgTimeout(o.num("sendTimeoutMs", 5000));
        p.setRetryTimesWhenSendFailed(0);
        p.start();
        for (int i = 0; i < n; i++) {
            String key = "sql-" + i;
            try {
                Message m = msg(topic, i % 3 == 0 ? "T2" : "T1", key);
                m.putUserProperty("a", String.valueOf(i));
                printSent("props", key, p.send(m));
            } catch (Throwable t) {
                Errors.print("send props " + key, t);
            }
        }
        p.shutdown();
    }

    static void produce(String namesrv, Opts o, RecordingHook hook) throws Exception {
        String topic = o.req("topic");
        int n = o.num("n", 20);
        DefaultMQProducer p = new DefaultMQProducer(o.str("group", "PID_IOP_JAVA"), hook);
        p.setNamesrvAddr(namesrv);
        p.setInstanceName("iop-producer-" + System.nanoTime());
        p.setDefaultTopicQueueNums(o.num("queueNums", 4));
        p.setSendMsgTimeout(o.num("sendTimeoutMs", 5000));
        p.setRetryTimesWhenSendFailed(0);
        p.setRetryTimesWhenSendAsyncFailed(0);
        p.start();
        AtomicInteger ok = new AtomicInteger();
        // sync
        for (int i = 0; i < n; i++) {
            String key = "sync-" + i;
            try {
                SendResult r = p.send(msg(topic, i % 2 == 0 ? "TagA" : "TagB", key));
                printSent("sync", key, r);
                ok.incrementAndGet();
            } catch (Throwable t) {
                Errors.print("send sync " + key, t);
            }
        }
        // async
        CountDownLatch latch = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            final String key = "async-" + i;
            try {
                p.send(msg(topic, i % 2 == 0 ? "TagA" : "TagB", key), new SendCallback() {
                    @Override
                    public void onSuccess(SendResult r) {
                        printSent("async", key, r);
                        latch.countDown();
                    }

                    @Override
                    public void onException(Throwable e) {
                        Errors.print("send async " + key, e);
                        latch.countDown();
                    }
                });
            } catch (Throwable t) {
                Errors.print("send async " + key, t);
                latch.countDown();
            }
        }
        if (!latch.await(30, TimeUnit.SECONDS)) Json.obj().put("type", "error").put("op", "send async").put("message", "callbacks missing after 30 s").println();
        // oneway
        for (int i = 0; i < n; i++) {
            String key = "oneway-" + i;
            try {
                p.sendOneway(msg(topic, i % 2 == 0 ? "TagA" : "TagB", key));
                Json.obj().put("type", "sent").put("mode", "oneway").put("key", key).println();
            } catch (Throwable t) {
                Errors.print("send oneway " + key, t);
            }
        }
        // batch (SEND_BATCH_MESSAGE 320)
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) batch.add(msg(topic, i % 2 == 0 ? "TagA" : "TagB", "batch-" + i));
        try {
            SendResult r = p.send(batch);
            String[] ids = r.getMsgId() == null ? new String[0] : r.getMsgId().split(",");
            Json.obj().put("type", "sent").put("mode", "batch").put("key", "batch-*").put("status", r.getSendStatus().name())
                .put("msgId", r.getMsgId()).put("offsetMsgId", r.getOffsetMsgId()).put("count", ids.length)
                .put("queueId", r.getMessageQueue().getQueueId()).put("queueOffset", r.getQueueOffset()).println();
        } catch (Throwable t) {
            Errors.print("send batch", t);
        }
        // delay level
        int delayLevel = o.num("delayLevel", 1);
        try {
            Message m = msg(topic, "TagA", "delay-0");
            m.setDelayTimeLevel(delayLevel);
            long before = System.currentTimeMillis();
            SendResult r = p.send(m);
            printSent("delay", "delay-0", r);
            Json.obj().put("type", "delaySent").put("at", before).put("level", delayLevel).println();
        } catch (Throwable t) {
            Errors.print("send delay", t);
        }
        // ordered: MessageQueueSelector by order id
        int orderIds = o.num("orderIds", 3);
        int perOrder = o.num("perOrder", 10);
        for (int s = 0; s < perOrder; s++) {
            for (int id = 0; id < orderIds; id++) {
                String key = "order-" + id + "-" + s;
                try {
                    SendResult r = p.send(msg(topic, "TagC", key),
                        (List<MessageQueue> mqs, Message m, Object arg) -> mqs.get((Integer) arg % mqs.size()), id);
                    printSent("order", key, r);
                } catch (Throwable t) {
                    Errors.print("send order " + key, t);
                }
            }
        }
        p.shutdown();
        Json.obj().put("type", "summary").put("syncOk", ok.get()).println();
    }
}
