package tsmq.interop.rocketmq5;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageExt;
import tsmq.interop.common.Json;

/**
 * Apache RocketMQ 5.3.3 remoting client peer for timer messages:
 *
 * <pre>
 *   TimerPeer &lt;namesrv&gt; topic=T group=G n=10 delayMs=3000 recall=1 timeoutMs=30000 idleMs=1500
 * </pre>
 * Starts a push consumer on T (from the first offset), then sends n messages with
 * Message.setDeliverTimeMs(now + delayMs) (keys timer-i) and one with setDelayTimeMs(delayMs)
 * (key delayms-0); with recall=1 recalls timer-(n-1) through DefaultMQProducer.recallMessage and
 * the recall handle of its SendResult, then tries an undecodable handle (the client itself refuses
 * it: "badRecall") and the same handle with its time moved 1 s into the past (the broker answers:
 * "expiredRecall" with the MQBrokerException's code and text). With cancel=1 it also sends, for
 * timer-(n-2), a deletion marker (key delmark-0; TIMER_DEL_UNIQKEY = "T+<its msgId>", the same
 * delivery time, set through MessageAccessor as Apache's own RecallMessageProcessor builds one) and
 * one message due 4 days ahead, beyond timerMaxDelaySec (key far-0: "farSend" with the code).
 * With tx=1 a TransactionMQProducer sends one half message with setDeliverTimeMs(now + delayMs)
 * (key tx-0) and commits it from executeLocalTransaction: it is filed in the wheel at the commit.
 * Consumes until every expected key arrived plus idleMs.
 * Output: JSON lines "sent", "txSent", "recalled", "badRecall", "expiredRecall", "farSend", "recv", "error", "end".
 */
public final class TimerPeer {
    public static void main(String[] args) throws Exception {
        String namesrv = args[0];
        Map<String, String> o = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            o.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        String topic = o.get("topic");
        int n = Integer.parseInt(o.getOrDefault("n", "10"));
        long delayMs = Long.parseLong(o.getOrDefault("delayMs", "3000"));
        boolean recall = "1".equals(o.get("recall"));
        boolean cancel = "1".equals(o.get("cancel"));
        boolean tx = "1".equals(o.get("tx"));
        long timeoutMs = Long.parseLong(o.getOrDefault("timeoutMs", "30000"));
        long idleMs = Long.parseLong(o.getOrDefault("idleMs", "1500"));
        Set<String> received = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(o.getOrDefault("group", "GID_TIMER5"));
        DefaultMQProducer producer = new DefaultMQProducer("PID_TIMER5");
        try {
            consumer.setNamesrvAddr(namesrv);
            consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            consumer.subscribe(topic, "*");
            consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                long now = System.currentTimeMillis();
                for (MessageExt m : msgs) {
                    received.add(m.getKeys());
                    Json.obj().put("type", "recv").put("key", m.getKeys()).put("at", now).put("storeTimestamp", m.getStoreTimestamp())
                        .put("deliverMs", m.getProperty("TIMER_DELIVER_MS")).put("timerOutMs", m.getProperty("TIMER_OUT_MS"))
                        .put("realTopic", m.getProperty("REAL_TOPIC")).put("uniqKey", m.getMsgId()).put("tags", m.getTags())
                        .put("body", new String(m.getBody(), StandardCharsets.UTF_8)).println();
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
            consumer.start();
            producer.setNamesrvAddr(namesrv);
            producer.start();
            String lastHandle = null;
            String cancelMsgId = null;
            long cancelDeliverMs = 0;
            for (int i = 0; i < n; i++) {
                Message m = new Message(topic, "TagT", "timer-" + i, ("timer-" + i).getBytes(StandardCharsets.UTF_8));
                long deliverMs = System.currentTimeMillis() + delayMs;
                m.setDeliverTimeMs(deliverMs);
                SendResult r = producer.send(m);
                lastHandle = r.getRecallHandle();
                if (i == n - 2) {
                    cancelMsgId = r.getMsgId();
                    cancelDeliverMs = deliverMs;
                }
                Json.obj().put("type", "sent").put("key", "timer-" + i).put("status", r.getSendStatus().name()).put("msgId", r.getMsgId())
                    .put("recallHandle", r.getRecallHandle()).put("deliverMs", deliverMs).println();
            }
            Message d = new Message(topic, "TagT", "delayms-0", "delayms-0".getBytes(StandardCharsets.UTF_8));
            long sentAt = System.currentTimeMillis();
            d.setDelayTimeMs(delayMs);
            SendResult dr = producer.send(d);
            Json.obj().put("type", "sent").put("key", "delayms-0").put("status", dr.getSendStatus().name()).put("msgId", dr.getMsgId())
                .put("recallHandle", dr.getRecallHandle()).put("deliverMs", sentAt + delayMs).println();
            if (recall && lastHandle != null) {
                try {
                    String id = producer.recallMessage(topic, lastHandle);
                    Json.obj().put("type", "recalled").put("key", "timer-" + (n - 1)).put("msgId", id).println();
                } catch (Exception e) {
                    Json.obj().put("type", "error").put("op", "recall").put("message", String.valueOf(e.getMessage())).println();
                }
                try {
                    producer.recallMessage(topic, "djEgbm90IGEgaGFuZGxl");
                    Json.obj().put("type", "error").put("op", "bad-recall").put("message", "accepted").println();
                } catch (Exception e) {
                    Json.obj().put("type", "badRecall").put("message", String.valueOf(e.getMessage())).println();
                }
                String[] f = new String(Base64.getUrlDecoder().decode(lastHandle), StandardCharsets.UTF_8).split(" ");
                f[3] = String.valueOf(System.currentTimeMillis() - 1000);
                String expired = Base64.getUrlEncoder().encodeToString(String.join(" ", f).getBytes(StandardCharsets.UTF_8));
                try {
                    producer.recallMessage(topic, expired);
                    Json.obj().put("type", "error").put("op", "expired-recall").put("message", "accepted").println();
                } catch (MQBrokerException e) {
                    Json.obj().put("type", "expiredRecall").put("code", e.getResponseCode()).put("message", String.valueOf(e.getErrorMessage())).println();
                } catch (Exception e) {
                    Json.obj().put("type", "error").put("op", "expired-recall").put("message", String.valueOf(e)).println();
                }
            }
            if (cancel && cancelMsgId != null) {
                Message del = new Message(topic, "TagT", "delmark-0", "0".getBytes(StandardCharsets.UTF_8));
                del.setDeliverTimeMs(cancelDeliverMs);
                MessageAccessor.putProperty(del, "TIMER_DEL_UNIQKEY", topic + "+" + cancelMsgId);
                SendResult dr2 = producer.send(del);
                Json.obj().put("type", "sent").put("key", "delmark-0").put("status", dr2.getSendStatus().name()).put("msgId", dr2.getMsgId())
                    .put("cancels", cancelMsgId).put("deliverMs", cancelDeliverMs).println();
                Message far = new Message(topic, "TagT", "far-0", "far-0".getBytes(StandardCharsets.UTF_8));
                far.setDeliverTimeMs(System.currentTimeMillis() + 4L * 24 * 3600 * 1000);
                try {
                    SendResult fr = producer.send(far);
                    Json.obj().put("type", "error").put("op", "far-send").put("message", "accepted: " + fr.getSendStatus()).println();
                } catch (MQBrokerException e) {
                    Json.obj().put("type", "farSend").put("code", e.getResponseCode()).put("message", String.valueOf(e.getErrorMessage())).println();
                }
            }
            if (tx) {
                TransactionMQProducer txp = new TransactionMQProducer("PID_TIMER5_TX");
                txp.setNamesrvAddr(namesrv);
                txp.setTransactionListener(new TransactionListener() {
                    @Override
                    public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                        return LocalTransactionState.COMMIT_MESSAGE;
                    }

                    @Override
                    public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                        return LocalTransactionState.COMMIT_MESSAGE;
                    }
                });
                txp.start();
                try {
                    Message t = new Message(topic, "TagT", "tx-0", "tx-0".getBytes(StandardCharsets.UTF_8));
                    long deliverMs = System.currentTimeMillis() + delayMs;
                    t.setDeliverTimeMs(deliverMs);
                    TransactionSendResult tr = txp.sendMessageInTransaction(t, null);
                    Json.obj().put("type", "txSent").put("key", "tx-0").put("status", tr.getSendStatus().name())
                        .put("localState", String.valueOf(tr.getLocalTransactionState())).put("msgId", tr.getMsgId()).put("deliverMs", deliverMs).println();
                } finally {
                    txp.shutdown();
                }
            }
            int expected = n + 1 - (recall ? 1 : 0) - (cancel ? 1 : 0) + (tx ? 1 : 0);
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (received.size() < expected && System.currentTimeMillis() < deadline) Thread.sleep(50);
            Thread.sleep(idleMs);
        } catch (Throwable t) {
            Json.obj().put("type", "error").put("op", "run").put("message", String.valueOf(t)).println();
        } finally {
            producer.shutdown();
            consumer.shutdown();
        }
        Json.obj().put("type", "end").println();
        System.exit(0);
    }
}
