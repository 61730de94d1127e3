import org.apache.rocketmq.client.consumer.*;
import org.apache.rocketmq.client.consumer.listener.*;
import org.apache.rocketmq.client.producer.*;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.*;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;

/** Mixed4 <namesrv> <seconds>: steady modest mixed load with the 4.9.8 client; prints per-minute latency percentiles. */
public class Mixed4 {
  static final ConcurrentLinkedQueue<Long> sendLat = new ConcurrentLinkedQueue<>(), e2eLat = new ConcurrentLinkedQueue<>(), delayLate = new ConcurrentLinkedQueue<>(), timerLate = new ConcurrentLinkedQueue<>();
  static final AtomicLong sent = new AtomicLong(), consumed = new AtomicLong(), pulled = new AtomicLong(), txSent = new AtomicLong(), txConsumed = new AtomicLong(), errors = new AtomicLong(), checks = new AtomicLong();
  static String pct(ConcurrentLinkedQueue<Long> q) { List<Long> l = new ArrayList<>(); Long v; while ((v = q.poll()) != null) l.add(v); if (l.isEmpty()) return "null"; Collections.sort(l); return "{\"n\":" + l.size() + ",\"p50\":" + l.get(l.size() / 2) + ",\"p99\":" + l.get((int) (l.size() * 0.99)) + ",\"max\":" + l.get(l.size() - 1) + "}"; }
  public static void main(String[] a) throws Exception {
    String ns = a[0]; long secs = Long.parseLong(a[1]); long t0 = System.currentTimeMillis(), until = t0 + secs * 1000;
    DefaultMQProducer p = new DefaultMQProducer("PG_MIXED"); p.setNamesrvAddr(ns); p.start();
    TransactionMQProducer tp = new TransactionMQProducer("PG_MIXED_TX"); tp.setNamesrvAddr(ns);
    tp.setTransactionListener(new TransactionListener() {
      public LocalTransactionState executeLocalTransaction(Message m, Object arg) { int i = (Integer) arg; return i % 3 == 0 ? LocalTransactionState.COMMIT_MESSAGE : i % 3 == 1 ? LocalTransactionState.ROLLBACK_MESSAGE : LocalTransactionState.UNKNOW; }
      public LocalTransactionState checkLocalTransaction(MessageExt m) { checks.incrementAndGet(); return LocalTransactionState.COMMIT_MESSAGE; }
    });
    tp.start();
    DefaultMQPushConsumer c = new DefaultMQPushConsumer("CG_MIXED"); c.setNamesrvAddr(ns); c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
    c.subscribe("MixedTopic", "*"); c.subscribe("MixedTxTopic", "*"); c.setConsumeThreadMin(2); c.setConsumeThreadMax(2);
    c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> { long now = System.currentTimeMillis(); for (MessageExt m : msgs) {
        consumed.incrementAndGet(); if (m.getTopic().equals("MixedTxTopic")) txConsumed.incrementAndGet();
        String due = m.getUserProperty("dueAt"); if (due != null) (m.getProperty("TIMER_DELAY_SEC") != null ? timerLate : delayLate).add(now - Long.parseLong(due)); else e2eLat.add(now - m.getBornTimestamp()); }
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS; });
    c.start();
    DefaultLitePullConsumer lp = new DefaultLitePullConsumer("CG_MIXED_LITE"); lp.setNamesrvAddr(ns); lp.subscribe("MixedTopic", "*"); lp.setPullBatchSize(32); lp.start();
    Thread puller = new Thread(() -> { while (System.currentTimeMillis() < until + 5000) { try { pulled.addAndGet(lp.poll(1000).size()); } catch (Exception e) { errors.incrementAndGet(); } } });
    puller.setDaemon(true); puller.start();
    long nextReport = t0 + 60000; int tick = 0;
    while (System.currentTimeMillis() < until) {
      tick++; long s = System.currentTimeMillis();
      try {
        for (int i = 0; i < 5; i++) { long b = System.nanoTime(); p.send(new Message("MixedTopic", "TagA", ("s" + tick + "-" + i).getBytes())); sendLat.add((System.nanoTime() - b) / 1000); sent.incrementAndGet(); }
        if (tick % 2 == 0) { List<Message> batch = new ArrayList<>(); for (int i = 0; i < 10; i++) batch.add(new Message("MixedTopic", "TagB", ("b" + tick + "-" + i).getBytes())); long b = System.nanoTime(); p.send(batch); sendLat.add((System.nanoTime() - b) / 1000); sent.addAndGet(10); }
        if (tick % 2 == 1) { Message m = new Message("MixedTopic", "TagD", "delay".getBytes()); m.setDelayTimeLevel(2); m.putUserProperty("dueAt", String.valueOf(System.currentTimeMillis() + 5000)); p.send(m); sent.incrementAndGet(); }
        if (tick % 2 == 0) { Message m = new Message("MixedTopic", "TagT", "timer".getBytes()); m.putUserProperty("TIMER_DELAY_SEC", "3"); m.putUserProperty("dueAt", String.valueOf(System.currentTimeMillis() + 3000)); p.send(m); sent.incrementAndGet(); }
        tp.sendMessageInTransaction(new Message("MixedTxTopic", "Tx", ("t" + tick).getBytes()), tick); txSent.incrementAndGet();
      } catch (Exception e) { errors.incrementAndGet(); if (errors.get() < 10) System.out.println("{\"error\":\"" + e.toString().replace('"', '\'').replace('\n', ' ') + "\"}"); }
      if (System.currentTimeMillis() >= nextReport) { nextReport += 60000;
        System.out.println("{\"min\":" + (System.currentTimeMillis() - t0) / 60000 + ",\"sent\":" + sent + ",\"consumed\":" + consumed + ",\"pulled\":" + pulled + ",\"txSent\":" + txSent + ",\"txConsumed\":" + txConsumed + ",\"checks\":" + checks + ",\"errors\":" + errors + ",\"sendLatUs\":" + pct(sendLat) + ",\"e2eMs\":" + pct(e2eLat) + ",\"delayLateMs\":" + pct(delayLate) + ",\"timerLateMs\":" + pct(timerLate) + "}"); }
      long w = 500 - (System.currentTimeMillis() - s); if (w > 0) Thread.sleep(w);
    }
    Thread.sleep(15000);
    System.out.println("{\"done\":true,\"sent\":" + sent + ",\"consumed\":" + consumed + ",\"pulled\":" + pulled + ",\"txSent\":" + txSent + ",\"txConsumed\":" + txConsumed + ",\"checks\":" + checks + ",\"errors\":" + errors + "}");
    System.exit(0);
  }
}
