import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;

/** Churn4 <namesrv> <seconds> <topic> [kill]: loop: producer+push consumer start, send a few, consume, shutdown. kill: start then block forever (to be SIGKILLed). */
public class Churn4 {
  public static void main(String[] a) throws Exception {
    String ns = a[0]; long until = System.currentTimeMillis() + Long.parseLong(a[1]) * 1000; String topic = a[2];
    boolean kill = a.length > 3 && a[3].equals("kill");
    int iter = 0; AtomicLong consumed = new AtomicLong(); long sent = 0;
    while (System.currentTimeMillis() < until) {
      iter++;
      String inst = "churn-" + ProcessHandle.current().pid() + "-" + iter;
      DefaultMQProducer p = new DefaultMQProducer("PG_CHURN" + (iter % 5));
      p.setNamesrvAddr(ns); p.setInstanceName(inst); p.setSendMsgTimeout(5000);
      p.start();
      DefaultMQPushConsumer c = new DefaultMQPushConsumer("CG_CHURN" + (iter % 3));
      c.setNamesrvAddr(ns); c.setInstanceName(inst); c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
      c.subscribe(topic, "*"); c.setConsumeThreadMin(1); c.setConsumeThreadMax(1);
      CountDownLatch got = new CountDownLatch(1);
      c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> { consumed.addAndGet(msgs.size()); got.countDown(); return ConsumeConcurrentlyStatus.CONSUME_SUCCESS; });
      c.start();
      for (int i = 0; i < 5; i++) { try { p.send(new Message(topic, "T", ("m" + iter + "-" + i).getBytes())); sent++; } catch (Exception e) { System.out.println("{\"sendError\":\"" + e.getClass().getSimpleName() + "\"}"); } }
      got.await(6, TimeUnit.SECONDS);
      if (kill) { System.out.println("{\"ready\":true}"); System.out.flush(); Thread.sleep(3600_000); }
      Thread.sleep(500);
      c.shutdown(); p.shutdown();
      if (iter % 10 == 0) System.out.println("{\"iter\":" + iter + ",\"sent\":" + sent + ",\"consumed\":" + consumed.get() + "}");
      Thread.sleep(1500);
    }
    System.out.println("{\"done\":true,\"iter\":" + iter + ",\"sent\":" + sent + ",\"consumed\":" + consumed.get() + "}");
    System.exit(0);
  }
}
