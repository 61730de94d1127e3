package main

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// cmdTrace: `trace topic=T group=G n=N` — message trace (RIP-6): a producer and a push consumer
// with WithTrace(Access Local, default topic RMQ_SYS_TRACE_TOPIC); N messages "trace-<i>" sent and
// consumed; then both shut down, which flushes the trace dispatchers. The trace records are read
// back by the test (pull RMQ_SYS_TRACE_TOPIC).
func cmdTrace(ns []string, o opts) {
	topic, group, n := o.str("topic", "GoTraceTopic"), o.str("group", "GID_GO_TRACE"), o.num("n", 2)
	traceCfg := func() *primitive.TraceConfig {
		return &primitive.TraceConfig{Access: primitive.Local, Resolver: primitive.NewPassthroughResolver(ns)}
	}
	p := newProducer(ns, o, producer.WithGroupName("PID_GO_TRACE"), producer.WithTrace(traceCfg()))
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("trace-%d", i)
		m := primitive.NewMessage(topic, []byte(key))
		m.WithKeys([]string{key})
		m.WithTag("TTrace")
		r, err := p.SendSync(context.Background(), m)
		if err != nil {
			emitError("SendSync("+key+")", err)
			continue
		}
		f := sentFields(r)
		f["key"] = key
		emit("sent", f)
	}
	var c counter
	pc := newPushConsumerWith(ns, o, group, 0, consumer.WithTrace(traceCfg()))
	err := pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "TTrace"}, func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		for _, m := range msgs {
			emit("recv", recvFields(m))
			c.hit()
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		fatal("Subscribe", err)
	}
	if err := pc.Start(); err != nil {
		fatal("PushConsumer.Start", err)
	}
	c.waitFor("trace", n, o.ms("idleMs", 500), o.ms("timeoutMs", 15000))
	time.Sleep(o.ms("flushWaitMs", 1500))
	pc.Shutdown()
	p.Shutdown()
}
