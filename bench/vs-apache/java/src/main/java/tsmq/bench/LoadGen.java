package tsmq.bench;

import java.util.Arrays;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Load generator for bench/vs-apache: the same program drives Apache RocketMQ and tsmq.
 *
 * Usage: LoadGen namesrv=HOST:PORT [seconds=30] [threads=16] [size=1024] [warmupSeconds=2]
 *        [queues=8] [topic=VsApacheBench] [consumeTimeoutSeconds=120]
 *
 * 1. produce: `threads` threads, each a closed loop of synchronous DefaultMQProducer.send() of
 *    `size`-byte bodies (one shared producer, as an application would), for `warmupSeconds`
 *    (not measured) then `seconds` (measured: msgs/s and send latency percentiles);
 * 2. consume: a DefaultMQPushConsumer (CONSUME_FROM_FIRST_OFFSET, new group) consumes everything
 *    that was sent OK (warm-up included); msgs/s from the first delivered message to the last
 *    distinct one (duplicates are counted apart).
 * Prints one JSON line per phase on stdout ("produce", "consume").
 */
public final class LoadGen {
  private static String opt(String[] args, String key, String def) {
    for (String a : args) if (a.startsWith(key + "=")) return a.substring(key.length() + 1);
    return def;
  }

  public static void main(String[] args) throws Exception {
    String namesrv = opt(args, "namesrv", null);
    if (namesrv == null) throw new IllegalArgumentException("namesrv=HOST:PORT is required");
    int seconds = Integer.parseInt(opt(args, "seconds", "30"));
    int threads = Integer.parseInt(opt(args, "threads", "16"));
    int size = Integer.parseInt(opt(args, "size", "1024"));
    int warmup = Integer.parseInt(opt(args, "warmupSeconds", "2"));
    int queues = Integer.parseInt(opt(args, "queues", "8"));
    String topic = opt(args, "topic", "VsApacheBench");
    int consumeTimeout = Integer.parseInt(opt(args, "consumeTimeoutSeconds", "120"));

    long okTotal = produce(namesrv, topic, seconds, threads, size, warmup, queues);
    consume(namesrv, topic, okTotal, consumeTimeout);
    System.exit(0);
  }

  private static long produce(String namesrv, String topic, int seconds, int threads, int size, int warmup, int queues) throws Exception {
    DefaultMQProducer producer = new DefaultMQProducer("VsApacheProducer");
    producer.setNamesrvAddr(namesrv);
    producer.setDefaultTopicQueueNums(queues);
    producer.setSendMsgTimeout(10_000);
    producer.setRetryTimesWhenSendFailed(2);
    producer.setInstanceName("vs-apache-p-" + System.nanoTime());
    producer.start();
    byte[] body = new byte[size];
    new Random(42).nextBytes(body);
    // First send creates the topic (autoCreateTopicEnable on both brokers); retried until the route exists.
    long created = 0;
    for (int i = 0; i < 50 && created == 0; i++) {
      try {
        SendResult r = producer.send(new Message(topic, "TagA", body));
        if (r.getSendStatus() == SendStatus.SEND_OK) created = 1;
      } catch (Exception e) {
        Thread.sleep(200);
      }
    }
    if (created == 0) throw new IllegalStateException("could not send the first message to " + topic);
    int queueCount = producer.fetchPublishMessageQueues(topic).size();

    final long warmEnd = System.nanoTime() + warmup * 1_000_000_000L;
    final long end = warmEnd + seconds * 1_000_000_000L;
    final long[][] lat = new long[threads][];
    final int[] counts = new int[threads];
    final AtomicLong ok = new AtomicLong(created);
    final AtomicLong measuredOk = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final AtomicLong notOk = new AtomicLong();
    final CountDownLatch done = new CountDownLatch(threads);
    final long[] firstMeasured = {Long.MAX_VALUE};
    Thread[] ts = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      final int id = t;
      lat[t] = new long[1 << 16];
      ts[t] = new Thread(() -> {
        try {
          for (;;) {
            long t0 = System.nanoTime();
            if (t0 >= end) break;
            boolean measured = t0 >= warmEnd;
            try {
              SendResult r = producer.send(new Message(topic, "TagA", body));
              long us = (System.nanoTime() - t0) / 1000;
              if (r.getSendStatus() == SendStatus.SEND_OK) {
                ok.incrementAndGet();
                if (measured) {
                  measuredOk.incrementAndGet();
                  if (counts[id] == lat[id].length) lat[id] = Arrays.copyOf(lat[id], lat[id].length * 2);
                  lat[id][counts[id]++] = us;
                }
              } else {
                notOk.incrementAndGet();
              }
            } catch (Exception e) {
              errors.incrementAndGet();
            }
          }
        } finally {
          done.countDown();
        }
      }, "sender-" + t);
      ts[t].start();
    }
    done.await();
    long measuredNs = end - warmEnd;
    int n = 0;
    for (int c : counts) n += c;
    long[] all = new long[n];
    int k = 0;
    for (int t = 0; t < threads; t++) {
      System.arraycopy(lat[t], 0, all, k, counts[t]);
      k += counts[t];
    }
    Arrays.sort(all);
    producer.shutdown();
    System.out.println("{\"phase\":\"produce\",\"threads\":" + threads + ",\"size\":" + size + ",\"queues\":" + queueCount
        + ",\"warmupSeconds\":" + warmup + ",\"seconds\":" + seconds
        + ",\"measuredOk\":" + measuredOk.get() + ",\"totalOk\":" + ok.get() + ",\"notOk\":" + notOk.get() + ",\"errors\":" + errors.get()
        + ",\"msgsPerSec\":" + round(measuredOk.get() / (measuredNs / 1e9))
        + ",\"p50Ms\":" + pct(all, 0.50) + ",\"p90Ms\":" + pct(all, 0.90) + ",\"p99Ms\":" + pct(all, 0.99)
        + ",\"p999Ms\":" + pct(all, 0.999) + ",\"maxMs\":" + (n == 0 ? 0 : all[n - 1] / 1000.0) + "}");
    System.out.flush();
    return ok.get();
  }

  private static double round(double v) {
    return Math.round(v * 10) / 10.0;
  }

  private static double pct(long[] sortedUs, double p) {
    if (sortedUs.length == 0) return 0;
    int i = (int) Math.min(sortedUs.length - 1, Math.ceil(p * sortedUs.length) - 1);
    return sortedUs[Math.max(0, i)] / 1000.0;
  }

  private static void consume(String namesrv, String topic, long expected, int timeoutSeconds) throws Exception {
    final Set<String> seen = ConcurrentHashMap.newKeySet();
    final AtomicLong deliveries = new AtomicLong();
    final AtomicLong firstNs = new AtomicLong(0);
    final AtomicLong lastNs = new AtomicLong(0);
    final CountDownLatch all = new CountDownLatch(1);
    DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("VsApacheConsumer");
    consumer.setNamesrvAddr(namesrv);
    consumer.setInstanceName("vs-apache-c-" + System.nanoTime());
    consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    consumer.subscribe(topic, "*");
    consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
      long now = System.nanoTime();
      firstNs.compareAndSet(0, now);
      for (MessageExt m : msgs) {
        deliveries.incrementAndGet();
        if (seen.add(m.getMsgId()) && seen.size() >= expected) {
          lastNs.compareAndSet(0, System.nanoTime());
          all.countDown();
        }
      }
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    long startNs = System.nanoTime();
    consumer.start();
    boolean complete = all.await(timeoutSeconds, java.util.concurrent.TimeUnit.SECONDS);
    long endNs = complete ? lastNs.get() : System.nanoTime();
    long first = firstNs.get() == 0 ? endNs : firstNs.get();
    consumer.shutdown();
    long distinct = seen.size();
    double fromFirst = (endNs - first) / 1e9;
    System.out.println("{\"phase\":\"consume\",\"expected\":" + expected + ",\"distinct\":" + distinct + ",\"deliveries\":" + deliveries.get()
        + ",\"complete\":" + complete + ",\"firstMessageAfterMs\":" + round((first - startNs) / 1e6)
        + ",\"secondsFromFirst\":" + round(fromFirst * 1000) / 1000.0 + ",\"secondsFromStart\":" + round((endNs - startNs) / 1e6) / 1000.0
        + ",\"msgsPerSec\":" + round(fromFirst > 0 ? distinct / fromFirst : 0)
        + ",\"msgsPerSecFromStart\":" + round(distinct / ((endNs - startNs) / 1e9)) + "}");
    System.out.flush();
  }
}
