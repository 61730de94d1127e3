package tsmq.interop.store5;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageExtBrokerInner;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.GetMessageResult;
import org.apache.rocketmq.store.PutMessageResult;
import org.apache.rocketmq.store.timer.TimerCheckpoint;
import org.apache.rocketmq.store.timer.TimerMessageStore;
import org.apache.rocketmq.store.timer.TimerMetrics;
import tsmq.interop.common.Json;

/**
 * Apache RocketMQ 5.3.3 TimerMessageStore over a store directory (timerwheel, timerlog/,
 * config/timercheck), timerPrecisionMs 1000, Apache's default 7-day wheel.
 *
 * <pre>
 *   ApacheTimer5Peer deliver &lt;dir&gt; until=&lt;epochMs&gt; topic=T queues=4 [--cl n --cq n]
 *     loads the timer store written by tsmq, runs it until `until`, then prints every message of
 *     T ({"type":"msg", key, storeTimestamp, timerOutMs, deliverMs, realTopic}) and shuts down cleanly.
 *   ApacheTimer5Peer write &lt;dir&gt; count=N delayMs=D topic=T queues=4 [--cl n --cq n]
 *     puts N timer messages the way Apache's broker put hook does (HookUtils.transformTimerMessage:
 *     TIMER_OUT_MS floored to the precision, REAL_TOPIC/REAL_QID, topic rmq_sys_wheel_timer queue 0),
 *     waits until TimerMessageStore has them in its wheel and a flush passed, shuts down cleanly;
 *     prints {"type":"sent", key, deliverMs, timerOutMs}.
 * </pre>
 */
public final class ApacheTimer5Peer {
    public static void main(String[] args) throws Exception {
        Store5Options o = Store5Options.parse(args);
        String mode = o.positional.get(0);
        String dir = o.positional.get(1);
        Map<String, String> kv = new HashMap<>();
        for (String p : o.positional.subList(2, o.positional.size())) {
            int eq = p.indexOf('=');
            kv.put(p.substring(0, eq), p.substring(eq + 1));
        }
        DefaultMessageStore store = o.open(dir);
        store.getMessageStoreConfig().setTimerPrecisionMs(1000);
        TimerCheckpoint cp = new TimerCheckpoint(Paths.get(dir, "config", "timercheck").toString());
        TimerMetrics metrics = new TimerMetrics(Paths.get(dir, "config", "timermetrics").toString());
        TimerMessageStore timer = new TimerMessageStore(store, store.getMessageStoreConfig(), cp, metrics, null);
        store.setTimerMessageStore(timer);
        if (!timer.load()) throw new IllegalStateException("TimerMessageStore.load() returned false");
        timer.start(true);
        String topic = kv.get("topic");
        int queues = Integer.parseInt(kv.getOrDefault("queues", "4"));
        try {
            if (mode.equals("deliver")) {
                long until = Long.parseLong(kv.get("until"));
                while (System.currentTimeMillis() < until) Thread.sleep(100);
                for (int q = 0; q < queues; q++) {
                    long offset = 0;
                    for (;;) {
                        GetMessageResult r = store.getMessage("TIMER_PEER", topic, q, offset, 256, null);
                        if (r == null || r.getMessageBufferList().isEmpty()) {
                            if (r != null) r.release();
                            break;
                        }
                        for (ByteBuffer bb : r.getMessageBufferList()) {
                            MessageExt m = MessageDecoder.decode(bb, true, false);
                            Json.obj().put("type", "msg").put("key", m.getKeys()).put("queueId", q).put("storeTimestamp", m.getStoreTimestamp())
                                .put("timerOutMs", m.getProperty(MessageConst.PROPERTY_TIMER_OUT_MS))
                                .put("deliverMs", m.getProperty(MessageConst.PROPERTY_TIMER_DELIVER_MS))
                                .put("realTopic", m.getProperty(MessageConst.PROPERTY_REAL_TOPIC))
                                .put("body", new String(m.getBody(), StandardCharsets.UTF_8))
                                .put("props", MessageDecoder.messageProperties2String(m.getProperties())).println();
                        }
                        offset = r.getNextBeginOffset();
                        r.release();
                    }
                }
            } else if (mode.equals("write")) {
                int count = Integer.parseInt(kv.get("count"));
                long delayMs = Long.parseLong(kv.get("delayMs"));
                for (int i = 0; i < count; i++) {
                    String key = "apache-" + i;
                    long deliverMs = System.currentTimeMillis() + delayMs;
                    long out = deliverMs % 1000 == 0 ? deliverMs - 1000 : deliverMs / 1000 * 1000;
                    MessageExtBrokerInner m = new MessageExtBrokerInner();
                    m.setTopic(TimerMessageStore.TIMER_TOPIC);
                    m.setQueueId(0);
                    m.setBody(key.getBytes(StandardCharsets.UTF_8));
                    MessageAccessor.putProperty(m, MessageConst.PROPERTY_KEYS, key);
                    MessageAccessor.putProperty(m, MessageConst.PROPERTY_TAGS, "TagA");
                    MessageAccessor.putProperty(m, MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, String.format("7F0000010000%020d", i));
                    MessageAccessor.putProperty(m, MessageConst.PROPERTY_TIMER_DELIVER_MS, String.valueOf(deliverMs));
                    MessageAccessor.putProperty(m, MessageConst.PROPERTY_TIMER_OUT_MS, String.valueOf(out));
                    MessageAccessor.putProperty(m, MessageConst.PROPERTY_REAL_TOPIC, topic);
                    MessageAccessor.putProperty(m, MessageConst.PROPERTY_REAL_QUEUE_ID, String.valueOf(i % queues));
                    m.setPropertiesString(MessageDecoder.messageProperties2String(m.getProperties()));
                    m.setTagsCode(MessageExtBrokerInner.tagsString2tagsCode("TagA"));
                    m.setBornTimestamp(System.currentTimeMillis());
                    m.setBornHost(new java.net.InetSocketAddress("127.0.0.1", 5000));
                    m.setStoreHost(new java.net.InetSocketAddress("127.0.0.1", 10911));
                    PutMessageResult r = store.putMessage(m);
                    Json.obj().put("type", "sent").put("key", key).put("status", r.getPutMessageStatus().name()).put("deliverMs", deliverMs).put("timerOutMs", out).println();
                }
                long deadline = System.currentTimeMillis() + 30_000;
                while (timer.getEnqueueBehindMessages() > 0 && System.currentTimeMillis() < deadline) Thread.sleep(50);
                Thread.sleep(2500); // TimerFlushService: checkpoint + wheel + log flushed (timerFlushIntervalMs 1000)
                Json.obj().put("type", "enqueued").put("behind", timer.getEnqueueBehindMessages()).println();
            }
        } finally {
            timer.shutdown();
            store.shutdown();
        }
        Json.obj().put("type", "end").println();
        System.exit(0);
    }
}
