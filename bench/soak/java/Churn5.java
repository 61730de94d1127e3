import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.apache.rocketmq.client.apis.*;
import org.apache.rocketmq.client.apis.consumer.*;
import org.apache.rocketmq.client.apis.message.*;
import org.apache.rocketmq.client.apis.producer.*;

/** Churn5 <endpoints> <seconds> <topic> [kill]: loop: gRPC Producer, SimpleConsumer, PushConsumer start, send, receive, close. */
public class Churn5 {
  public static void main(String[] a) throws Exception {
    String ep = a[0]; long until = System.currentTimeMillis() + Long.parseLong(a[1]) * 1000; String topic = a[2];
    boolean kill = a.length > 3 && a[3].equals("kill");
    ClientServiceProvider sp = ClientServiceProvider.loadService();
    ClientConfiguration cfg = ClientConfiguration.newBuilder().setEndpoints(ep).setRequestTimeout(Duration.ofSeconds(5)).enableSsl(false).build();
    int iter = 0; long sent = 0, recv = 0; AtomicLong pushed = new AtomicLong();
    while (System.currentTimeMillis() < until) {
      iter++;
      try (Producer p = sp.newProducerBuilder().setClientConfiguration(cfg).setTopics(topic).build()) {
        for (int i = 0; i < 3; i++) { p.send(sp.newMessageBuilder().setTopic(topic).setTag("T").setBody(("g" + iter + "-" + i).getBytes()).build()); sent++; }
        SimpleConsumer sc = sp.newSimpleConsumerBuilder().setClientConfiguration(cfg).setConsumerGroup("SG_CHURN" + (iter % 3))
            .setSubscriptionExpressions(Map.of(topic, FilterExpression.SUB_ALL)).setAwaitDuration(Duration.ofSeconds(2)).build();
        List<MessageView> got = sc.receive(16, Duration.ofSeconds(15));
        for (MessageView m : got) { sc.ack(m); recv++; }
        PushConsumer pc = sp.newPushConsumerBuilder().setClientConfiguration(cfg).setConsumerGroup("PCG_CHURN" + (iter % 3))
            .setSubscriptionExpressions(Map.of(topic, FilterExpression.SUB_ALL)).setConsumptionThreadCount(1)
            .setMessageListener(m -> { pushed.incrementAndGet(); return ConsumeResult.SUCCESS; }).build();
        Thread.sleep(2000);
        if (kill) { System.out.println("{\"ready\":true}"); System.out.flush(); Thread.sleep(3600_000); }
        pc.close(); sc.close();
      } catch (Exception e) { System.out.println("{\"error\":\"" + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('"', '\'') + "\"}"); }
      if (iter % 10 == 0) System.out.println("{\"iter\":" + iter + ",\"sent\":" + sent + ",\"recv\":" + recv + ",\"pushed\":" + pushed.get() + "}");
      Thread.sleep(1500);
    }
    System.out.println("{\"done\":true,\"iter\":" + iter + ",\"sent\":" + sent + ",\"recv\":" + recv + ",\"pushed\":" + pushed.get() + "}");
    System.exit(0);
  }
}
