package tsmq.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.admin.ConsumeStats;
import org.apache.rocketmq.common.admin.OffsetWrapper;
import org.apache.rocketmq.common.admin.RollbackStats;
import org.apache.rocketmq.common.admin.TopicOffset;
import org.apache.rocketmq.common.admin.TopicStatsTable;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.protocol.route.BrokerData;
import org.apache.rocketmq.common.protocol.route.QueueData;
import org.apache.rocketmq.common.protocol.route.TopicRouteData;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import tsmq.interop.common.Json;

/** DefaultMQAdminExt scenario of ClientPeer: each step prints {"type":"admin","op":...} or an error line. */
final class Admin {
    interface Step {
        void run() throws Exception;
    }

    static void step(String op, Step s) {
        try {
            s.run();
        } catch (Throwable t) {
            Errors.print(op, t);
        }
    }

    static void run(String namesrv, Opts o, RecordingHook hook) throws Exception {
        String topic = o.req("topic");
        String group = o.str("group", "");
        DefaultMQAdminExt admin = new DefaultMQAdminExt(hook, 5000);
        admin.setNamesrvAddr(namesrv);
        admin.setInstanceName("iop-admin-" + System.nanoTime());
        admin.start();
        final String[] brokerAddr = {null};
        step("examineTopicRouteInfo", () -> {
            TopicRouteData r = admin.examineTopicRouteInfo(topic);
            printRoute("examineTopicRouteInfo", topic, r);
            brokerAddr[0] = r.getBrokerDatas().get(0).selectBrokerAddr();
        });
        for (String extra : o.str("routes", "").split(",")) {
            if (extra.isEmpty()) continue;
            step("examineTopicRouteInfo(" + extra + ")", () -> printRoute("examineTopicRouteInfo(" + extra + ")", extra, admin.examineTopicRouteInfo(extra)));
        }
        String newTopic = o.str("newTopic", "");
        if (!newTopic.isEmpty() && brokerAddr[0] != null) {
            step("createAndUpdateTopicConfig", () -> {
                TopicConfig tc = new TopicConfig(newTopic, 3, 3, 6);
                admin.createAndUpdateTopicConfig(brokerAddr[0], tc);
                Json.obj().put("type", "admin").put("op", "createAndUpdateTopicConfig").put("topic", newTopic).put("ok", true).println();
            });
            step("examineTopicRouteInfo(new)", () -> {
                Thread.sleep(o.num("routeWaitMs", 0));
                printRoute("examineTopicRouteInfo(new)", newTopic, admin.examineTopicRouteInfo(newTopic));
            });
        }
        step("examineTopicStats", () -> {
            TopicStatsTable t = admin.examineTopicStats(topic);
            List<Object> qs = new ArrayList<>();
            for (Map.Entry<MessageQueue, TopicOffset> e : new TreeMap<>(t.getOffsetTable()).entrySet()) {
                qs.add(Json.obj().put("queueId", e.getKey().getQueueId()).put("min", e.getValue().getMinOffset())
                    .put("max", e.getValue().getMaxOffset()).put("lastUpdateTimestamp", e.getValue().getLastUpdateTimestamp()));
            }
            Json.obj().put("type", "admin").put("op", "examineTopicStats").put("queues", qs).println();
        });
        if (!group.isEmpty()) step("examineConsumeStats", () -> printConsumeStats("examineConsumeStats", admin.examineConsumeStats(group)));
        String key = o.str("key", "");
        if (!key.isEmpty()) {
            step("queryMessage", () -> {
                QueryResult r = admin.queryMessage(topic, key, 32, 0, Long.MAX_VALUE);
                List<String> keys = new ArrayList<>();
                for (MessageExt m : r.getMessageList()) keys.add(m.getKeys());
                Json.obj().put("type", "admin").put("op", "queryMessage").put("key", key).put("found", keys).println();
            });
        }
        String offsetMsgId = o.str("offsetMsgId", "");
        if (!offsetMsgId.isEmpty()) {
            step("viewMessage(offsetMsgId)", () -> {
                MessageExt m = admin.viewMessage(offsetMsgId);
                Json.obj().put("type", "admin").put("op", "viewMessage(offsetMsgId)").put("id", offsetMsgId).put("key", m.getKeys())
                    .put("queueId", m.getQueueId()).put("queueOffset", m.getQueueOffset()).println();
            });
        }
        String uniqMsgId = o.str("uniqMsgId", "");
        if (!uniqMsgId.isEmpty()) {
            step("viewMessage(topic,uniqMsgId)", () -> {
                MessageExt m = admin.viewMessage(topic, uniqMsgId);
                Json.obj().put("type", "admin").put("op", "viewMessage(topic,uniqMsgId)").put("id", uniqMsgId).put("key", m.getKeys()).println();
            });
        }
        long resetTs = o.lng("resetTs", -1);
        if (resetTs >= 0 && !group.isEmpty()) {
            step("resetOffsetByTimestamp", () -> {
                Map<MessageQueue, Long> r = admin.resetOffsetByTimestamp(topic, group, resetTs, true);
                Map<String, Long> out = new TreeMap<>();
                r.forEach((mq, off) -> out.put(String.valueOf(mq.getQueueId()), off));
                Json.obj().put("type", "admin").put("op", "resetOffsetByTimestamp").put("offsets", out).println();
            });
            step("resetOffsetByTimestampOld", () -> {
                List<RollbackStats> r = admin.resetOffsetByTimestampOld(group, topic, resetTs, true);
                List<Object> out = new ArrayList<>();
                for (RollbackStats s : r) {
                    out.add(Json.obj().put("queueId", s.getQueueId()).put("brokerOffset", s.getBrokerOffset())
                        .put("consumerOffset", s.getConsumerOffset()).put("timestampOffset", s.getTimestampOffset())
                        .put("rollbackOffset", s.getRollbackOffset()));
                }
                Json.obj().put("type", "admin").put("op", "resetOffsetByTimestampOld").put("stats", out).println();
            });
            step("examineConsumeStats(after reset)", () -> printConsumeStats("examineConsumeStats(after reset)", admin.examineConsumeStats(group)));
        }
        admin.shutdown();
    }

    static void printRoute(String op, String topic, TopicRouteData r) {
        List<Object> qds = new ArrayList<>();
        for (QueueData q : r.getQueueDatas()) {
            qds.add(Json.obj().put("brokerName", q.getBrokerName()).put("read", q.getReadQueueNums())
                .put("write", q.getWriteQueueNums()).put("perm", q.getPerm()));
        }
        List<Object> bds = new ArrayList<>();
        for (BrokerData b : r.getBrokerDatas()) {
            Map<String, String> addrs = new TreeMap<>();
            b.getBrokerAddrs().forEach((id, a) -> addrs.put(String.valueOf(id), a));
            bds.add(Json.obj().put("cluster", b.getCluster()).put("brokerName", b.getBrokerName()).put("addrs", addrs));
        }
        Json.obj().put("type", "admin").put("op", op).put("topic", topic).put("queueDatas", qds).put("brokerDatas", bds).println();
    }

    static void printConsumeStats(String op, ConsumeStats s) {
        List<Object> qs = new ArrayList<>();
        for (Map.Entry<MessageQueue, OffsetWrapper> e : new TreeMap<>(s.getOffsetTable()).entrySet()) {
            qs.add(Json.obj().put("topic", e.getKey().getTopic()).put("queueId", e.getKey().getQueueId())
                .put("brokerOffset", e.getValue().getBrokerOffset()).put("consumerOffset", e.getValue().getConsumerOffset()));
        }
        Json.obj().put("type", "admin").put("op", op).put("diffTotal", s.computeTotalDiff()).put("queues", qs).println();
    }
}
