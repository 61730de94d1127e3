package tsmq.interop.store5;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentMap;
import org.apache.rocketmq.common.BoundaryType;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.store.ConsumeQueueExt;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.GetMessageResult;
import org.apache.rocketmq.store.MessageFilter;
import org.apache.rocketmq.store.QueryMessageResult;
import org.apache.rocketmq.store.queue.ConsumeQueueInterface;
import org.apache.rocketmq.store.queue.CqUnit;
import tsmq.interop.common.Json;
import tsmq.interop.common.Recipe;

/**
 * Apache RocketMQ 5.x reader: same output as the 4.9.8 ApacheStoreReader, plus the UPPER
 * boundary for getOffsetInQueueByTime ("upper" field of "time" lines).
 */
public final class ApacheStore5Reader {
    static final String GROUP = "iop-reader";

    public static void main(String[] args) throws Exception {
        Store5Options o = Store5Options.parse(args);
        String dir = o.positional.get(0);
        DefaultMessageStore store = o.open(dir);
        Json.obj().put("type", "store").put("peer", "apache-5.3.3")
            .put("minPhyOffset", store.getMinPhyOffset()).put("maxPhyOffset", store.getMaxPhyOffset()).println();
        Map<String, Map<Integer, ConsumeQueueInterface>> table = new TreeMap<>();
        for (Map.Entry<String, ConcurrentMap<Integer, ConsumeQueueInterface>> e : store.getConsumeQueueTable().entrySet()) {
            table.put(e.getKey(), new TreeMap<>(e.getValue()));
        }
        for (Map.Entry<String, Map<Integer, ConsumeQueueInterface>> t : table.entrySet()) {
            for (Map.Entry<Integer, ConsumeQueueInterface> q : t.getValue().entrySet()) {
                dumpQueue(store, t.getKey(), q.getKey(), q.getValue());
            }
        }
        for (String[] row : Store5Options.readTsv(o.queriesFile)) {
            QueryMessageResult qr = store.queryMessage(row[0], row[1], 64, 0, Long.MAX_VALUE);
            List<Long> offsets = new ArrayList<>();
            List<Long> queueOffsets = new ArrayList<>();
            for (ByteBuffer bb : qr.getMessageBufferList()) {
                MessageExt m = MessageDecoder.decode(bb, false, false);
                offsets.add(m.getCommitLogOffset());
                queueOffsets.add(m.getQueueOffset());
            }
            qr.release();
            Json.obj().put("type", "query").put("topic", row[0]).put("key", row[1])
                .put("offsets", offsets).put("queueOffsets", queueOffsets).println();
        }
        for (String[] row : Store5Options.readTsv(o.timesFile)) {
            int q = Integer.parseInt(row[1]);
            long ts = Long.parseLong(row[2]);
            Json.obj().put("type", "time").put("topic", row[0]).put("queueId", q).put("ts", ts)
                .put("offset", store.getOffsetInQueueByTime(row[0], q, ts, BoundaryType.LOWER))
                .put("upper", store.getOffsetInQueueByTime(row[0], q, ts, BoundaryType.UPPER)).println();
        }
        store.shutdown();
        Json.obj().put("type", "end").println();
        System.exit(0);
    }

    static void dumpQueue(DefaultMessageStore store, String topic, int queueId, ConsumeQueueInterface cq) {
        long min = cq.getMinOffsetInQueue();
        long max = cq.getMaxOffsetInQueue();
        Json.obj().put("type", "queue").put("topic", topic).put("queueId", queueId).put("minOffset", min)
            .put("maxOffset", max).put("earliestTime", store.getEarliestMessageTime(topic, queueId)).println();
        long offset = min;
        int guard = 0;
        while (offset < max && guard++ < 100000) {
            GetMessageResult r = store.getMessage(GROUP, topic, queueId, offset, 32, null);
            if (r == null) break;
            if (r.getMessageBufferList().isEmpty()) {
                Json.obj().put("type", "gap").put("topic", topic).put("queueId", queueId).put("offset", offset)
                    .put("status", r.getStatus().name()).put("nextBeginOffset", r.getNextBeginOffset()).println();
                if (r.getNextBeginOffset() <= offset) break;
            }
            for (ByteBuffer bb : r.getMessageBufferList()) printMessage(cq, bb);
            long next = r.getNextBeginOffset();
            r.release();
            if (next <= offset) break;
            offset = next;
        }
        probe(store, topic, queueId, max);
        probe(store, topic, queueId, max + 5);
        if (min > 0) probe(store, topic, queueId, min - 1);
        final long tagA = "TagA".hashCode();
        MessageFilter f = new MessageFilter() {
            @Override
            public boolean isMatchedByConsumeQueue(Long tagsCode, ConsumeQueueExt.CqExtUnit cqExtUnit) {
                return tagsCode != null && tagsCode == tagA;
            }

            @Override
            public boolean isMatchedByCommitLog(ByteBuffer msgBuffer, Map<String, String> properties) {
                return true;
            }
        };
        List<Long> matched = new ArrayList<>();
        offset = min;
        guard = 0;
        while (offset < max && guard++ < 100000) {
            GetMessageResult r = store.getMessage(GROUP, topic, queueId, offset, 32, f);
            if (r == null) break;
            for (ByteBuffer bb : r.getMessageBufferList()) matched.add(MessageDecoder.decode(bb, false, false).getQueueOffset());
            long next = r.getNextBeginOffset();
            r.release();
            if (next <= offset) break;
            offset = next;
        }
        Json.obj().put("type", "filter").put("topic", topic).put("queueId", queueId).put("tag", "TagA")
            .put("queueOffsets", matched).println();
    }

    static void probe(DefaultMessageStore store, String topic, int queueId, long offset) {
        GetMessageResult r = store.getMessage(GROUP, topic, queueId, offset, 32, null);
        Json.obj().put("type", "probe").put("topic", topic).put("queueId", queueId).put("offset", offset)
            .put("status", r == null ? null : r.getStatus().name())
            .put("nextBeginOffset", r == null ? null : r.getNextBeginOffset())
            .put("count", r == null ? null : r.getMessageBufferList().size()).println();
        if (r != null) r.release();
    }

    static void printMessage(ConsumeQueueInterface cq, ByteBuffer bb) {
        MessageExt m = MessageDecoder.decode(bb.slice(), true, false);
        CqUnit u = cq.get(m.getQueueOffset());
        Json.obj().put("type", "msg").put("topic", m.getTopic()).put("queueId", m.getQueueId())
            .put("queueOffset", m.getQueueOffset()).put("commitLogOffset", m.getCommitLogOffset())
            .put("storeSize", m.getStoreSize()).put("bodyCrc", m.getBodyCRC()).put("flag", m.getFlag())
            .put("sysFlag", m.getSysFlag()).put("bornTimestamp", m.getBornTimestamp())
            .put("bornHost", Recipe.hostString((InetSocketAddress) m.getBornHost()))
            .put("storeTimestamp", m.getStoreTimestamp())
            .put("storeHost", Recipe.hostString((InetSocketAddress) m.getStoreHost()))
            .put("reconsumeTimes", m.getReconsumeTimes())
            .put("preparedTransactionOffset", m.getPreparedTransactionOffset())
            .put("msgId", m.getMsgId()).put("body", m.getBody() == null ? new byte[0] : m.getBody())
            .put("properties", m.getProperties())
            .put("cqPhysicalOffset", u == null ? -1 : u.getPos()).put("cqSize", u == null ? -1 : u.getSize())
            .put("cqTagsCode", u == null ? 0 : u.getTagsCode()).println();
    }
}
