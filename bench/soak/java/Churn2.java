import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.message.*;
import org.apache.rocketmq.common.subscription.SubscriptionGroupConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import java.util.*;

/** Churn2 <namesrv> <broker> <count> <perSec> <prefix>: create topic+group, send 2 msgs (one as batch), pull, delete topic (broker+namesrv) and group. */
public class Churn2 {
  public static void main(String[] a) throws Exception {
    String ns = a[0], broker = a[1]; int count = Integer.parseInt(a[2]); double perSec = Double.parseDouble(a[3]); String prefix = a[4];
    DefaultMQAdminExt admin = new DefaultMQAdminExt(); admin.setNamesrvAddr(ns); admin.setInstanceName("churn2-admin"); admin.start();
    DefaultMQProducer p = new DefaultMQProducer("PG_TOPIC_CHURN"); p.setNamesrvAddr(ns); p.setInstanceName("churn2-prod"); p.start();
    long t0 = System.currentTimeMillis(); int errors = 0; long sent = 0;
    for (int i = 0; i < count; i++) {
      String topic = prefix + "_T_" + i, group = prefix + "_G_" + i;
      try {
        TopicConfig tc = new TopicConfig(topic, 2, 2, 6); admin.createAndUpdateTopicConfig(broker, tc);
        SubscriptionGroupConfig sg = new SubscriptionGroupConfig(); sg.setGroupName(group); admin.createAndUpdateSubscriptionGroupConfig(broker, sg);
        Message m = new Message(topic, "TagA", ("hello " + i).getBytes()); m.setKeys("k" + i);
        p.send(m); sent++;
        p.send(Arrays.asList(new Message(topic, "TagB", "b1".getBytes()), new Message(topic, "TagB", "b2".getBytes()))); sent += 2;
        if (i % 4 == 0) { // a consumer that commits an offset and registers stats for the group
          admin.updateConsumeOffset(broker, group, new MessageQueue(topic, "broker-a", 0), 1); admin.updateConsumeOffset(broker, group, new MessageQueue(topic, "broker-a", 1), 1);
        }
        admin.deleteTopicInBroker(new HashSet<>(List.of(broker)), topic);
        admin.deleteTopicInNameServer(new HashSet<>(List.of(ns)), topic, "DefaultCluster");
        admin.deleteSubscriptionGroup(broker, group, true);
      } catch (Exception e) { errors++; if (errors < 20) System.out.println("{\"i\":" + i + ",\"error\":\"" + e.toString().replace('"', '\'').replace('\n', ' ') + "\"}"); }
      if ((i + 1) % 200 == 0) System.out.println("{\"i\":" + (i + 1) + ",\"sent\":" + sent + ",\"errors\":" + errors + ",\"ms\":" + (System.currentTimeMillis() - t0) + "}");
      long due = t0 + (long) ((i + 1) * 1000 / perSec); long w = due - System.currentTimeMillis(); if (w > 0) Thread.sleep(w);
    }
    System.out.println("{\"done\":true,\"sent\":" + sent + ",\"errors\":" + errors + "}");
    p.shutdown(); admin.shutdown(); System.exit(0);
  }
}
