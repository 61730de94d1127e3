package tsmq.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Load generator for bench/vs-apache: the same program (Apache rocketmq-client 4.9.8, unmodified)
 * drives Apache RocketMQ and tsmq. It is driven by commands on stdin, one a line, and answers with
 * one JSON line per command on stdout ({"event":...}); stdin EOF ends the JVM.
 *
 * <pre>
 * produce mode=single|batch|raw threads=T size=BYTES batch=N topic=X queues=Q
 *     starts T closed-loop senders (sync DefaultMQProducer.send(Message), or send(Collection) of N
 *     messages for mode=batch) that run until `measure` ends; answers {"event":"producing"}.
 *     mode=raw: each sender sends SEND_MESSAGE_V2 requests itself through the producer's own
 *     remoting layer (MQClientAPIImpl's RemotingClient, invokeSync), round robin over the topic's
 *     queues, with what DefaultMQProducer.send(Message) puts in a request (producer group, the
 *     queue, TAGS, a new UNIQ_KEY from MessageClientIDSetter and WAIT=true; born time and host) but
 *     without the producer's per-send work (validation, route choice, latency fault tolerance,
 *     response header decoding into a SendResult): a sender that costs little per message, so
 *     that the broker, not the client, bounds the phase on a small machine (the same requests and
 *     the same client code for both brokers); SUCCESS (0) counts as SEND_OK
 * stats
 *     answers {"event":"stats","msgs":M,"calls":C,"latencyUsSum":L,"epochMs":T}: the OK messages and
 *     send calls of the produce senders since the JVM started (warm-up and measured window alike) and the sum of their
 *     latencies in µs, for the harness's per-interval warm-up trace (it diffs two answers)
 * measure seconds=S
 *     counts the sends that start in the next S seconds (msgs/s, latency histogram per call), then
 *     stops the senders; answers {"event":"produced",...}
 * preload topic=X messages=M size=BYTES queues=Q
 *     M async single sends (256 in flight, the producer's round robin over the queues, so the
 *     queues' records interleave in the CommitLog as with many senders); answers {"event":"preloaded"}
 * consume kind=push|lite|raw topic=X group=G expected=M timeoutSeconds=T pullBatch=32 consumeBatch=1 queueThreshold=1000
 *     a new consumer group from the first offset (DefaultMQPushConsumer or DefaultLitePullConsumer)
 *     until M distinct (queueId, queueOffset) were delivered; kind=raw: PULL_MESSAGE requests sent
 *     through the client's own remoting layer (MQClientAPIImpl's RemotingClient, subscription "*"
 *     in the request), one pull of pullBatch in flight per queue from offset 0 to the queue's end,
 *     and each reply's records only walked (TOTALSIZE, QUEUEID, QUEUEOFFSET), not decoded: a
 *     consumer that costs little per message, so that the broker, not the client, bounds the
 *     phase (the same requests and the same client code for both brokers); pullBatch = pullBatchSize of both,
 *     consumeBatch = the push consumer's consumeMessageBatchMaxSize (messages per listener call),
 *     queueThreshold = pullThresholdForQueue of both (cached messages per queue before the client
 *     stops pulling it); answers {"event":"consumed",...}
 * quit
 * </pre>
 * Latency histogram: microseconds, 1 µs buckets below 2048 µs, then 256 buckets per power of two
 * (&lt; 0.4 % error); printed as [[bucketLowUs, count], ...] so that several JVMs can be merged.
 */
public final class LoadGen {
  private static DefaultMQProducer producer;
  private static String namesrv;
  private static final List<Thread> senders = new ArrayList<>();
  private static volatile boolean stop;
  private static volatile long measureStartNs = Long.MAX_VALUE;
  private static volatile long measureEndNs = Long.MAX_VALUE;
  private static long[][] hist;
  private static long[] measuredMsgs;
  private static final AtomicLong errors = new AtomicLong();
  private static final AtomicLong notOk = new AtomicLong();
  private static String produceMode = "single";
  /** the first failed send of the current measurement (exception or non-OK status), for the report */
  private static volatile String firstError = null;
  private static int batchSize = 1;
  /** every OK send of the produce senders since the JVM started (not only the measured window): the `stats` command's counters */
  private static final LongAdder okMsgs = new LongAdder();
  private static final LongAdder okCalls = new LongAdder();
  private static final LongAdder okLatencyUs = new LongAdder();

  public static void main(String[] args) throws Exception {
    namesrv = opt(parse(args), "namesrv", null);
    if (namesrv == null) throw new IllegalArgumentException("namesrv=HOST:PORT is required");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    emit("{\"event\":\"ready\"}");
    for (String line; (line = in.readLine()) != null; ) {
      line = line.trim();
      if (line.isEmpty()) continue;
      String[] parts = line.split("\\s+");
      Map<String, String> a = parse(java.util.Arrays.copyOfRange(parts, 1, parts.length));
      try {
        switch (parts[0]) {
          case "produce": produce(a); break;
          case "stats": stats(); break;
          case "measure": measure(Integer.parseInt(opt(a, "seconds", "30"))); break;
          case "preload": preload(a); break;
          case "consume": consume(a); break;
          case "quit": System.exit(0); break;
          default: throw new IllegalArgumentException("unknown command " + parts[0]);
        }
      } catch (Exception e) {
        emit("{\"event\":\"error\",\"command\":\"" + parts[0] + "\",\"message\":\"" + jsonSafe(String.valueOf(e)) + "\"}");
      }
    }
    System.exit(0);
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> m = new HashMap<>();
    for (String s : args) {
      int i = s.indexOf('=');
      if (i > 0) m.put(s.substring(0, i), s.substring(i + 1));
    }
    return m;
  }

  private static String opt(Map<String, String> a, String k, String def) {
    return a.getOrDefault(k, def);
  }

  private static String jsonSafe(String s) {
    String t = s.length() > 300 ? s.substring(0, 300) : s;
    return t.replace("\\", "/").replace("\"", "'").replaceAll("[\\x00-\\x1f]", " ");
  }

  private static void emit(String json) {
    System.out.println(json);
    System.out.flush();
  }

  private static synchronized DefaultMQProducer producer(int queues) throws Exception {
    if (producer == null) {
      producer = new DefaultMQProducer("VsApacheProducer");
      producer.setNamesrvAddr(namesrv);
      producer.setDefaultTopicQueueNums(queues);
      producer.setSendMsgTimeout(10_000);
      producer.setRetryTimesWhenSendFailed(2);
      producer.setRetryTimesWhenSendAsyncFailed(2);
      producer.setInstanceName("vs-apache-p-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
      producer.start();
    }
    return producer;
  }

  private static byte[] body(int size) {
    byte[] b = new byte[size];
    new Random(42).nextBytes(b);
    return b;
  }

  /** First send creates the topic (autoCreateTopicEnable on both brokers); retried until the route exists. */
  private static void ensureTopic(DefaultMQProducer p, String topic, byte[] body) throws Exception {
    for (int i = 0; i < 100; i++) {
      try {
        if (p.send(new Message(topic, "TagA", body)).getSendStatus() == SendStatus.SEND_OK) {
          usePublishedRoute(p, topic);
          return;
        }
      } catch (Exception e) {
        Thread.sleep(200);
      }
    }
    throw new IllegalStateException("could not send the first message to " + topic);
  }

  /**
   * After the first send created the topic: the producer takes the topic's registered route
   * (the client otherwise refreshes it every pollNameServerInterval = 30 s). Against Apache the
   * route of a new topic comes from TBW102 and the producer's defaultTopicQueueNums (8 here), so
   * all 8 queues are written from the start; tsmq's nameserver answers the route of an unknown
   * topic itself with min(4, TBW102's queues) (get-route-info-by-topic.ts, for ali-ons), so
   * without this refresh a preload shorter than 30 s wrote only queues 0-3 of 8 on tsmq, and its
   * consumers then had half of Apache's pulls in flight. Waits until the producer's queues are the
   * topic's published ones (at most 10 s).
   */
  private static void usePublishedRoute(DefaultMQProducer p, String topic) throws Exception {
    int published = 0;
    int used = 0;
    for (int i = 0; i < 100; i++) {
      p.getDefaultMQProducerImpl().getmQClientFactory().updateTopicRouteInfoFromNameServer(topic);
      published = p.fetchPublishMessageQueues(topic).size();
      org.apache.rocketmq.client.impl.producer.TopicPublishInfo info = p.getDefaultMQProducerImpl().getTopicPublishInfoTable().get(topic);
      used = info == null ? 0 : info.getMessageQueueList().size();
      if (published > 0 && used == published) return;
      Thread.sleep(100);
    }
    throw new IllegalStateException("producer uses " + used + " queues of " + topic + ", the route has " + published);
  }

  // ---------- latency histogram ----------
  private static final int LINEAR = 2048;
  private static final int BUCKETS = LINEAR + 53 * 256;

  private static int bucket(long us) {
    if (us < LINEAR) return (int) Math.max(0, us);
    int e = 63 - Long.numberOfLeadingZeros(us);
    return Math.min(BUCKETS - 1, LINEAR + (e - 11) * 256 + (int) ((us >> (e - 8)) & 255));
  }

  private static long bucketLow(int i) {
    if (i < LINEAR) return i;
    int e = (i - LINEAR) / 256 + 11;
    long m = (i - LINEAR) % 256;
    return (1L << e) + (m << (e - 8));
  }

  // ---------- produce ----------
  private static void produce(Map<String, String> a) throws Exception {
    if (!senders.isEmpty()) throw new IllegalStateException("already producing");
    produceMode = opt(a, "mode", "single");
    int threads = Integer.parseInt(opt(a, "threads", "16"));
    int size = Integer.parseInt(opt(a, "size", "1024"));
    batchSize = "batch".equals(produceMode) ? Integer.parseInt(opt(a, "batch", "32")) : 1;
    String topic = opt(a, "topic", "VsApacheBench");
    DefaultMQProducer p = producer(Integer.parseInt(opt(a, "queues", "8")));
    byte[] body = body(size);
    ensureTopic(p, topic, body);
    List<org.apache.rocketmq.common.message.MessageQueue> mqs = p.fetchPublishMessageQueues(topic);
    int queueCount = mqs.size();
    final RawSend raw = "raw".equals(produceMode) ? new RawSend(p, topic, body, mqs) : null;
    stop = false;
    measureStartNs = Long.MAX_VALUE;
    measureEndNs = Long.MAX_VALUE;
    hist = new long[threads][];
    measuredMsgs = new long[threads];
    errors.set(0);
    notOk.set(0);
    for (int t = 0; t < threads; t++) {
      final int id = t;
      hist[t] = new long[BUCKETS];
      Thread th = new Thread(() -> {
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < batchSize; i++) batch.add(new Message(topic, "TagA", body));
        while (!stop) {
          long t0 = System.nanoTime();
          try {
            String bad; // null: SEND_OK
            if (raw != null) bad = raw.send(id);
            else {
              SendStatus st = (batchSize > 1 ? p.send(batch) : p.send(new Message(topic, "TagA", body))).getSendStatus();
              bad = st == SendStatus.SEND_OK ? null : String.valueOf(st);
            }
            long us = (System.nanoTime() - t0) / 1000;
            if (bad == null) {
              okMsgs.add(batchSize);
              okCalls.increment();
              okLatencyUs.add(us);
              if (t0 >= measureStartNs && t0 < measureEndNs) {
                measuredMsgs[id] += batchSize;
                hist[id][bucket(us)]++;
              }
            } else {
              notOk.incrementAndGet();
              if (firstError == null && t0 >= measureStartNs) firstError = bad;
            }
          } catch (Exception e) {
            errors.incrementAndGet();
            if (firstError == null && t0 >= measureStartNs) firstError = String.valueOf(e);
          }
        }
      }, "sender-" + t);
      th.setDaemon(true);
      senders.add(th);
      th.start();
    }
    emit("{\"event\":\"producing\",\"mode\":\"" + produceMode + "\",\"threads\":" + threads + ",\"batch\":" + batchSize + ",\"queues\":" + queueCount + "}");
  }

  /**
   * produce mode=raw (see the class comment): SEND_MESSAGE_V2 (310) requests built by hand and sent
   * with the producer's RemotingClient. Queue i of the round robin is (sender id + count) % queues.
   */
  private static final class RawSend {
    private final org.apache.rocketmq.remoting.RemotingClient client;
    private final String group;
    private final String topic;
    private final byte[] body;
    private final List<org.apache.rocketmq.common.message.MessageQueue> queues;
    private final List<String> addrs = new ArrayList<>();
    private final long[] counts = new long[4096];

    RawSend(DefaultMQProducer p, String topic, byte[] body, List<org.apache.rocketmq.common.message.MessageQueue> queues) {
      org.apache.rocketmq.client.impl.factory.MQClientInstance f = p.getDefaultMQProducerImpl().getMqClientFactory();
      this.client = f.getMQClientAPIImpl().getRemotingClient();
      this.group = p.getProducerGroup();
      this.topic = topic;
      this.body = body;
      this.queues = queues;
      for (org.apache.rocketmq.common.message.MessageQueue q : queues) {
        String addr = f.findBrokerAddressInPublish(q.getBrokerName());
        if (addr == null) throw new IllegalStateException("no broker address for " + q);
        addrs.add(addr);
      }
    }

    /** One sync send; null when the broker answered SUCCESS, else "code N: remark" (or "no answer"). */
    String send(int sender) throws Exception {
      int i = (int) ((sender + counts[sender & 4095]++) % queues.size());
      org.apache.rocketmq.common.message.MessageQueue q = queues.get(i);
      Map<String, String> props = new HashMap<>();
      props.put("TAGS", "TagA");
      props.put("WAIT", "true");
      props.put("UNIQ_KEY", org.apache.rocketmq.common.message.MessageClientIDSetter.createUniqID());
      org.apache.rocketmq.common.protocol.header.SendMessageRequestHeader h = new org.apache.rocketmq.common.protocol.header.SendMessageRequestHeader();
      h.setProducerGroup(group);
      h.setTopic(topic);
      h.setDefaultTopic("TBW102");
      h.setDefaultTopicQueueNums(4);
      h.setQueueId(q.getQueueId());
      h.setSysFlag(0);
      h.setBornTimestamp(System.currentTimeMillis());
      h.setFlag(0);
      h.setProperties(org.apache.rocketmq.common.message.MessageDecoder.messageProperties2String(props));
      h.setReconsumeTimes(0);
      h.setUnitMode(false);
      h.setBatch(false);
      org.apache.rocketmq.remoting.protocol.RemotingCommand req = org.apache.rocketmq.remoting.protocol.RemotingCommand.createRequestCommand(
          org.apache.rocketmq.common.protocol.RequestCode.SEND_MESSAGE_V2,
          org.apache.rocketmq.common.protocol.header.SendMessageRequestHeaderV2.createSendMessageRequestHeaderV2(h));
      req.setBody(body);
      org.apache.rocketmq.remoting.protocol.RemotingCommand r = client.invokeSync(addrs.get(i), req, 10_000);
      if (r == null) return "no answer";
      return r.getCode() == 0 ? null : "code " + r.getCode() + ": " + r.getRemark();
    }
  }

  private static void stats() {
    emit("{\"event\":\"stats\",\"msgs\":" + okMsgs.sum() + ",\"calls\":" + okCalls.sum() + ",\"latencyUsSum\":" + okLatencyUs.sum()
        + ",\"epochMs\":" + System.currentTimeMillis() + "}");
  }

  private static void measure(int seconds) throws Exception {
    if (senders.isEmpty()) throw new IllegalStateException("not producing");
    firstError = null;
    long errors0 = errors.get();
    long notOk0 = notOk.get();
    long start = System.nanoTime();
    long end = start + seconds * 1_000_000_000L;
    measureEndNs = end;
    measureStartNs = start;
    long startEpochMs = System.currentTimeMillis();
    Thread.sleep(seconds * 1000L);
    stop = true;
    for (Thread t : senders) t.join();
    senders.clear();
    long msgs = 0;
    long calls = 0;
    long[] merged = new long[BUCKETS];
    for (int t = 0; t < hist.length; t++) {
      msgs += measuredMsgs[t];
      for (int i = 0; i < BUCKETS; i++) merged[i] += hist[t][i];
    }
    StringBuilder h = new StringBuilder("[");
    for (int i = 0; i < BUCKETS; i++) {
      if (merged[i] == 0) continue;
      calls += merged[i];
      if (h.length() > 1) h.append(',');
      h.append('[').append(bucketLow(i)).append(',').append(merged[i]).append(']');
    }
    h.append(']');
    emit("{\"event\":\"produced\",\"mode\":\"" + produceMode + "\",\"batch\":" + batchSize + ",\"seconds\":" + seconds
        + ",\"startEpochMs\":" + startEpochMs + ",\"msgs\":" + msgs + ",\"calls\":" + calls
        + ",\"notOk\":" + (notOk.get() - notOk0) + ",\"errors\":" + (errors.get() - errors0)
        + ",\"msgsPerSec\":" + Math.round(msgs / ((end - start) / 1e9))
        + ",\"firstError\":" + (firstError == null ? "null" : "\"" + jsonSafe(firstError) + "\"") + ",\"histUs\":" + h + "}");
  }

  // ---------- preload ----------
  /** async sends in flight while preloading (Apache answers SYSTEM_BUSY when a send waits > 200 ms in its queue) */
  private static final int PRELOAD_IN_FLIGHT = 256;

  private static void preload(Map<String, String> a) throws Exception {
    String topic = opt(a, "topic", "VsApacheConsume");
    long messages = Long.parseLong(opt(a, "messages", "100000"));
    DefaultMQProducer p = producer(Integer.parseInt(opt(a, "queues", "8")));
    byte[] body = body(Integer.parseInt(opt(a, "size", "1024")));
    ensureTopic(p, topic, body);
    Semaphore window = new Semaphore(PRELOAD_IN_FLIGHT);
    AtomicLong ok = new AtomicLong(1);
    AtomicLong failed = new AtomicLong();
    long t0 = System.nanoTime();
    long sent = 1;
    while (ok.get() < messages) {
      // sends replace failed ones until `messages` are stored
      if (sent - failed.get() >= messages) {
        Thread.sleep(1);
        continue;
      }
      window.acquire();
      sent++;
      p.send(new Message(topic, "TagA", body), new SendCallback() {
        @Override
        public void onSuccess(SendResult r) {
          if (r.getSendStatus() == SendStatus.SEND_OK) ok.incrementAndGet();
          else failed.incrementAndGet();
          window.release();
        }

        @Override
        public void onException(Throwable e) {
          failed.incrementAndGet();
          window.release();
        }
      }, 30_000);
    }
    window.acquire(PRELOAD_IN_FLIGHT);
    window.release(PRELOAD_IN_FLIGHT);
    emit("{\"event\":\"preloaded\",\"topic\":\"" + topic + "\",\"ok\":" + ok.get() + ",\"failed\":" + failed.get()
        + ",\"seconds\":" + Math.round((System.nanoTime() - t0) / 1e6) / 1000.0 + "}");
  }

  // ---------- consume ----------
  /** Distinct (queueId, queueOffset) pairs seen; counts the first time each is seen. */
  private static final class Seen {
    private final Map<Integer, BitSet> perQueue = new ConcurrentHashMap<>();
    private final AtomicLong distinct = new AtomicLong();

    long add(MessageExt m) {
      return add(m.getQueueId(), m.getQueueOffset());
    }

    long add(int queueId, long queueOffset) {
      BitSet b = perQueue.computeIfAbsent(queueId, q -> new BitSet());
      int off = (int) queueOffset;
      synchronized (b) {
        if (b.get(off)) return distinct.get();
        b.set(off);
      }
      return distinct.incrementAndGet();
    }
  }

  private static void consume(Map<String, String> a) throws Exception {
    String kind = opt(a, "kind", "push");
    String topic = opt(a, "topic", "VsApacheConsume");
    String group = opt(a, "group", "VsApacheConsumer");
    long expected = Long.parseLong(opt(a, "expected", "0"));
    int timeoutSeconds = Integer.parseInt(opt(a, "timeoutSeconds", "300"));
    int pullBatch = Integer.parseInt(opt(a, "pullBatch", "32"));
    int consumeBatch = Integer.parseInt(opt(a, "consumeBatch", "1"));
    int queueThreshold = Integer.parseInt(opt(a, "queueThreshold", "1000"));
    Seen seen = new Seen();
    AtomicLong deliveries = new AtomicLong();
    AtomicLong firstNs = new AtomicLong(0);
    AtomicLong lastNs = new AtomicLong(0);
    CountDownLatch all = new CountDownLatch(1);
    String instance = "vs-apache-c-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    long startNs = System.nanoTime();
    long startEpochMs = System.currentTimeMillis();
    boolean complete;
    long endNs;
    if ("push".equals(kind)) {
      DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
      c.setNamesrvAddr(namesrv);
      c.setInstanceName(instance);
      c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
      c.setPullBatchSize(pullBatch);
      c.setConsumeMessageBatchMaxSize(consumeBatch);
      c.setPullThresholdForQueue(queueThreshold);
      c.subscribe(topic, "*");
      c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
        firstNs.compareAndSet(0, System.nanoTime());
        for (MessageExt m : msgs) {
          deliveries.incrementAndGet();
          if (seen.add(m) >= expected && lastNs.compareAndSet(0, System.nanoTime())) all.countDown();
        }
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      });
      c.start();
      complete = all.await(timeoutSeconds, TimeUnit.SECONDS);
      endNs = complete ? lastNs.get() : System.nanoTime();
      c.shutdown();
    } else if ("lite".equals(kind)) {
      DefaultLitePullConsumer c = new DefaultLitePullConsumer(group);
      c.setNamesrvAddr(namesrv);
      c.setInstanceName(instance);
      c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
      c.setPullBatchSize(pullBatch);
      c.setPullThresholdForQueue(queueThreshold);
      c.subscribe(topic, "*");
      c.start();
      long deadline = startNs + timeoutSeconds * 1_000_000_000L;
      complete = false;
      while (System.nanoTime() < deadline) {
        List<MessageExt> msgs = c.poll(1000);
        if (msgs.isEmpty()) continue;
        firstNs.compareAndSet(0, System.nanoTime());
        long d = 0;
        for (MessageExt m : msgs) {
          deliveries.incrementAndGet();
          d = seen.add(m);
        }
        if (d >= expected) {
          lastNs.set(System.nanoTime());
          complete = true;
          break;
        }
      }
      endNs = complete ? lastNs.get() : System.nanoTime();
      c.shutdown();
    } else if ("raw".equals(kind)) {
      long deadline = startNs + timeoutSeconds * 1_000_000_000L;
      long[] done = rawPull(topic, group, pullBatch, instance, seen, deliveries, firstNs, deadline);
      complete = seen.distinct.get() >= expected;
      endNs = complete ? done[0] : System.nanoTime();
    } else {
      throw new IllegalArgumentException("kind must be push, lite or raw");
    }
    long first = firstNs.get() == 0 ? endNs : firstNs.get();
    long distinct = seen.distinct.get();
    double fromFirst = (endNs - first) / 1e9;
    emit("{\"event\":\"consumed\",\"kind\":\"" + kind + "\",\"expected\":" + expected + ",\"distinct\":" + distinct
        + ",\"deliveries\":" + deliveries.get() + ",\"complete\":" + complete
        + ",\"startEpochMs\":" + startEpochMs
        + ",\"firstEpochMs\":" + (startEpochMs + (first - startNs) / 1_000_000)
        + ",\"endEpochMs\":" + (startEpochMs + (endNs - startNs) / 1_000_000)
        + ",\"firstMessageAfterMs\":" + Math.round((first - startNs) / 1e5) / 10.0
        + ",\"secondsFromFirst\":" + Math.round(fromFirst * 1000) / 1000.0
        + ",\"msgsPerSec\":" + Math.round(fromFirst > 0 ? distinct / fromFirst : 0) + "}");
  }

  /**
   * kind=raw (see the class comment): every read queue of `topic` on its master broker pulled from 0
   * until the broker answers anything but SUCCESS (the preloaded set is complete before the phase
   * starts), one request in flight per queue. Returns {time of the last record seen (nanoTime)}.
   */
  private static long[] rawPull(String topic, String group, int pullBatch, String instance, Seen seen, AtomicLong deliveries, AtomicLong firstNs, long deadlineNs) throws Exception {
    org.apache.rocketmq.client.ClientConfig cc = new org.apache.rocketmq.client.ClientConfig();
    cc.setNamesrvAddr(namesrv);
    cc.setInstanceName(instance);
    org.apache.rocketmq.client.impl.factory.MQClientInstance factory = org.apache.rocketmq.client.impl.MQClientManager.getInstance().getOrCreateMQClientInstance(cc);
    factory.start();
    long[] last = {System.nanoTime()};
    try {
      org.apache.rocketmq.client.impl.MQClientAPIImpl api = factory.getMQClientAPIImpl();
      org.apache.rocketmq.common.protocol.route.TopicRouteData route = api.getTopicRouteInfoFromNameServer(topic, 10_000);
      List<String[]> queues = new ArrayList<>(); // {brokerAddr, queueId}
      for (org.apache.rocketmq.common.protocol.route.QueueData qd : route.getQueueDatas()) {
        for (org.apache.rocketmq.common.protocol.route.BrokerData bd : route.getBrokerDatas()) {
          if (!bd.getBrokerName().equals(qd.getBrokerName())) continue;
          String addr = bd.getBrokerAddrs().get(0L);
          for (int q = 0; q < qd.getReadQueueNums(); q++) queues.add(new String[] {addr, String.valueOf(q)});
        }
      }
      CountDownLatch finished = new CountDownLatch(queues.size());
      int sysFlag = org.apache.rocketmq.common.sysflag.PullSysFlag.buildSysFlag(false, false, true, false);
      for (String[] q : queues) {
        new RawQueuePuller(api.getRemotingClient(), q[0], topic, group, Integer.parseInt(q[1]), pullBatch, sysFlag, seen, deliveries, firstNs, last, finished, deadlineNs).pull(0);
      }
      finished.await(Math.max(1, deadlineNs - System.nanoTime()), TimeUnit.NANOSECONDS);
    } finally {
      factory.shutdown();
    }
    return last;
  }

  /** One queue of kind=raw: the next pull is sent from the previous one's callback. */
  private static final class RawQueuePuller {
    private final org.apache.rocketmq.remoting.RemotingClient client;
    private final String addr;
    private final String topic;
    private final String group;
    private final int queueId;
    private final int pullBatch;
    private final int sysFlag;
    private final Seen seen;
    private final AtomicLong deliveries;
    private final AtomicLong firstNs;
    private final long[] last;
    private final CountDownLatch finished;
    private final long deadlineNs;

    RawQueuePuller(org.apache.rocketmq.remoting.RemotingClient client, String addr, String topic, String group, int queueId, int pullBatch, int sysFlag,
        Seen seen, AtomicLong deliveries, AtomicLong firstNs, long[] last, CountDownLatch finished, long deadlineNs) {
      this.client = client;
      this.addr = addr;
      this.topic = topic;
      this.group = group;
      this.queueId = queueId;
      this.pullBatch = pullBatch;
      this.sysFlag = sysFlag;
      this.seen = seen;
      this.deliveries = deliveries;
      this.firstNs = firstNs;
      this.last = last;
      this.finished = finished;
      this.deadlineNs = deadlineNs;
    }

    void pull(long offset) {
      if (System.nanoTime() > deadlineNs) {
        finished.countDown();
        return;
      }
      org.apache.rocketmq.common.protocol.header.PullMessageRequestHeader h = new org.apache.rocketmq.common.protocol.header.PullMessageRequestHeader();
      h.setConsumerGroup(group);
      h.setTopic(topic);
      h.setQueueId(queueId);
      h.setQueueOffset(offset);
      h.setMaxMsgNums(pullBatch);
      h.setSysFlag(sysFlag);
      h.setCommitOffset(0L);
      h.setSuspendTimeoutMillis(0L);
      h.setSubscription("*");
      h.setSubVersion(0L);
      h.setExpressionType("TAG");
      org.apache.rocketmq.remoting.protocol.RemotingCommand req =
          org.apache.rocketmq.remoting.protocol.RemotingCommand.createRequestCommand(org.apache.rocketmq.common.protocol.RequestCode.PULL_MESSAGE, h);
      try {
        client.invokeAsync(addr, req, 30_000, f -> onReply(offset, f.getResponseCommand()));
      } catch (Exception e) {
        retry(offset);
      }
    }

    private void onReply(long offset, org.apache.rocketmq.remoting.protocol.RemotingCommand r) {
      if (r == null) {
        retry(offset);
        return;
      }
      if (r.getCode() != 0) {
        finished.countDown(); // PULL_NOT_FOUND at the end of the queue (or an error: counted as incomplete)
        return;
      }
      firstNs.compareAndSet(0, System.nanoTime());
      java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(r.getBody());
      for (int p = 0; p + 28 <= b.limit(); ) {
        int total = b.getInt(p);
        if (total <= 0) break;
        deliveries.incrementAndGet();
        seen.add(b.getInt(p + 12), b.getLong(p + 20));
        p += total;
      }
      synchronized (last) {
        last[0] = System.nanoTime();
      }
      pull(Long.parseLong(r.getExtFields().get("nextBeginOffset")));
    }

    private void retry(long offset) {
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      pull(offset);
    }
  }
}
