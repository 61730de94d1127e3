import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.apache.rocketmq.client.apis.*;
import org.apache.rocketmq.client.apis.consumer.*;
import org.apache.rocketmq.client.apis.message.*;
import org.apache.rocketmq.client.apis.producer.*;

/** Mixed5 <endpoints> <seconds>: gRPC producer (normal + delivery timestamp) and SimpleConsumer pop/ack; per-minute stats. */
public class Mixed5 {
  static String pct(ConcurrentLinkedQueue<Long> q) { List<Long> l = new ArrayList<>(); Long v; while ((v = q.poll()) != null) l.add(v); if (l.isEmpty()) return "null"; Collections.sort(l); return "{\"n\":" + l.size() + ",\"p50\":" + l.get(l.size() / 2) + ",\"p99\":" + l.get((int) (l.size() * 0.99)) + ",\"max\":" + l.get(l.size() - 1) + "}"; }
  public static void main(String[] a) throws Exception {
    String ep = a[0]; long t0 = System.currentTimeMillis(), until = t0 + Long.parseLong(a[1]) * 1000;
    ClientServiceProvider sp = ClientServiceProvider.loadService();
    ClientConfiguration cfg = ClientConfiguration.newBuilder().setEndpoints(ep).enableSsl(false).setRequestTimeout(Duration.ofSeconds(5)).build();
    Producer p = sp.newProducerBuilder().setClientConfiguration(cfg).setTopics("Mixed5Topic", "Mixed5Delay").build();
    SimpleConsumer sc = sp.newSimpleConsumerBuilder().setClientConfiguration(cfg).setConsumerGroup("SG_MIXED5").setAwaitDuration(Duration.ofSeconds(5))
        .setSubscriptionExpressions(Map.of("Mixed5Topic", FilterExpression.SUB_ALL, "Mixed5Delay", FilterExpression.SUB_ALL)).build();
    AtomicLong sent = new AtomicLong(), recv = new AtomicLong(), errors = new AtomicLong();
    ConcurrentLinkedQueue<Long> lat = new ConcurrentLinkedQueue<>(), late = new ConcurrentLinkedQueue<>(), e2e = new ConcurrentLinkedQueue<>();
    Thread rt = new Thread(() -> { while (System.currentTimeMillis() < until + 10000) { try { for (MessageView m : sc.receive(16, Duration.ofSeconds(30))) { long now = System.currentTimeMillis();
        Optional<Long> dt = m.getDeliveryTimestamp(); if (dt.isPresent()) late.add(now - dt.get()); else e2e.add(now - m.getBornTimestamp()); sc.ack(m); recv.incrementAndGet(); } } catch (Exception e) { errors.incrementAndGet(); } } });
    rt.setDaemon(true); rt.start();
    long next = t0 + 60000; int tick = 0;
    while (System.currentTimeMillis() < until) {
      tick++; long s = System.currentTimeMillis();
      try {
        for (int i = 0; i < 2; i++) { long b = System.nanoTime(); p.send(sp.newMessageBuilder().setTopic("Mixed5Topic").setTag("A").setKeys("k" + tick).setBody(("n" + tick).getBytes()).build()); lat.add((System.nanoTime() - b) / 1000); sent.incrementAndGet(); }
        p.send(sp.newMessageBuilder().setTopic("Mixed5Delay").setTag("D").setDeliveryTimestamp(System.currentTimeMillis() + 4000).setBody(("d" + tick).getBytes()).build()); sent.incrementAndGet();
      } catch (Exception e) { errors.incrementAndGet(); if (errors.get() < 10) System.out.println("{\"error\":\"" + e.toString().replace('"', '\'').replace('\n', ' ') + "\"}"); }
      if (System.currentTimeMillis() >= next) { next += 60000; System.out.println("{\"min\":" + (System.currentTimeMillis() - t0) / 60000 + ",\"sent\":" + sent + ",\"recv\":" + recv + ",\"errors\":" + errors + ",\"sendLatUs\":" + pct(lat) + ",\"e2eMs\":" + pct(e2e) + ",\"timerLateMs\":" + pct(late) + "}"); }
      long w = 1000 - (System.currentTimeMillis() - s); if (w > 0) Thread.sleep(w);
    }
    Thread.sleep(12000);
    System.out.println("{\"done\":true,\"sent\":" + sent + ",\"recv\":" + recv + ",\"errors\":" + errors + "}");
    System.exit(0);
  }
}
