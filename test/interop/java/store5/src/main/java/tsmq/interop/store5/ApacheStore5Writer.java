package tsmq.interop.store5;

import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.common.message.MessageExtBrokerInner;
import org.apache.rocketmq.store.PutMessageResult;
import tsmq.interop.common.Json;
import tsmq.interop.common.Recipe;

/**
 * Writes recipe messages f .. f+count-1 (the deterministic recipe) into an Apache RocketMQ 5.x DefaultMessageStore.
 *
 * Usage: ApacheStore5Writer &lt;dir&gt; &lt;count&gt; &lt;clean|crash|crash-nodispatch&gt; [--from f] [--long-topic] [--cl n --cq n --slots n --index n]
 * Prints one JSON line per put ({"type":"put",...}) and {"type":"done",...}. "clean" shuts the
 * store down (abort file removed); "crash" waits until the consume queues and index caught up
 * and halts the JVM (abort file left, page cache kept); "crash-nodispatch" halts right after the
 * last put.
 */
public final class ApacheStore5Writer {
    public static void main(String[] args) throws Exception {
        Store5Options o = Store5Options.parse(args);
        String dir = o.positional.get(0);
        int count = Integer.parseInt(o.positional.get(1));
        String mode = o.positional.size() > 2 ? o.positional.get(2) : "clean";
        DefaultMessageStore store = o.open(dir);
        for (int i = o.from; i < o.from + count; i++) {
            Recipe r = new Recipe(i, o.longTopics);
            MessageExtBrokerInner m = new MessageExtBrokerInner();
            m.setTopic(r.topic());
            m.setQueueId(r.queueId());
            m.setFlag(r.flag());
            m.setBody(r.body());
            r.properties().forEach((k, v) -> MessageAccessor.putProperty(m, k, v));
            m.setPropertiesString(MessageDecoder.messageProperties2String(m.getProperties()));
            m.setTagsCode(MessageExtBrokerInner.tagsString2tagsCode(r.tags()));
            m.setSysFlag(0);
            m.setBornTimestamp(r.bornTimestamp());
            m.setBornHost(r.bornHost());
            m.setStoreHost(r.storeHost());
            m.setReconsumeTimes(r.reconsumeTimes());
            PutMessageResult res = store.putMessage(m);
            Json j = Json.obj().put("type", "put").put("i", i).put("status", res.getPutMessageStatus().name());
            if (res.getAppendMessageResult() != null) {
                j.put("wroteOffset", res.getAppendMessageResult().getWroteOffset())
                    .put("wroteBytes", res.getAppendMessageResult().getWroteBytes())
                    .put("queueOffset", res.getAppendMessageResult().getLogicsOffset())
                    .put("msgId", res.getAppendMessageResult().getMsgId())
                    .put("storeTimestamp", res.getAppendMessageResult().getStoreTimestamp());
            }
            j.println();
            if (i % 40 == 39) Thread.sleep(3); // spread store timestamps for time searches
        }
        if (mode.equals("crash") || mode.equals("clean")) {
            long deadline = System.currentTimeMillis() + 30_000;
            while (store.dispatchBehindBytes() > 0 && System.currentTimeMillis() < deadline) Thread.sleep(10);
            Thread.sleep(200); // index building follows the consume-queue dispatch in the same thread
        }
        Json.obj().put("type", "done").put("mode", mode).put("maxPhyOffset", store.getMaxPhyOffset()).println();
        if (mode.startsWith("crash")) {
            Runtime.getRuntime().halt(0);
        }
        store.shutdown();
        System.exit(0);
    }
}
