package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// cmdRequest: `request topic=T group=G n=N ttlMs=L` — request-reply: a responder (push consumer of
// T in group G plus a reply producer) answers each request with consumer.CreateReplyMessage and
// body "reply-to-<request body>"; a requester producer calls Request(ctx, ttl, msg) for
// "request-<i>" (sync) and RequestAsync for "request-async-<i>". One "reply" line per answer
// (request key, reply body, properties), one "served" line per request the responder saw.
func cmdRequest(ns []string, o opts) {
	topic, group, n := o.str("topic", "GoRequestTopic"), o.str("group", "GID_GO_REPLY"), o.num("n", 2)
	ttl := o.ms("ttlMs", 5000)
	requester := newProducer(ns, o, producer.WithGroupName("PID_GO_REQUESTER"), producer.WithInstanceName(fmt.Sprintf("requester-%d", time.Now().UnixNano())))
	defer requester.Shutdown()
	// The broker pushes a reply to the requester's connection, which it knows from the requester's
	// HEART_BEAT. The Go client sends heartbeats (1 s after Start, then every 30 s) only to brokers
	// it already knows from a route, and Request sends one itself only when the topic is not on the
	// nameserver yet; so a Request of a fresh producer to an existing topic gets no reply from any
	// broker ("channel of <clientId> not found") until a heartbeat went out. Hence: the requester
	// sends the warm-up message (it learns the broker; this also creates the topic, which must
	// exist before the responder starts) and waits for its first heartbeat.
	warm := primitive.NewMessage(topic, []byte("request-warmup"))
	warm.WithTag("TWarm")
	if _, err := requester.SendSync(context.Background(), warm); err != nil {
		fatal("SendSync(warm-up)", err)
	}
	time.Sleep(o.ms("heartbeatWaitMs", 1500))
	replier := newProducer(ns, o, producer.WithGroupName("PID_GO_REPLIER"), producer.WithInstanceName(fmt.Sprintf("replier-%d", time.Now().UnixNano())))
	defer replier.Shutdown()
	responder := newPushConsumer(ns, o, group, 0)
	err := responder.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "TRequest"}, func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		for _, m := range msgs {
			f := recvFields(m)
			reply, err := consumer.CreateReplyMessage(m, []byte("reply-to-"+string(m.Body)))
			if err != nil {
				emitError("CreateReplyMessage", err)
				continue
			}
			// Go client (this version): CreateReplyMessage parses the body as properties and never
			// sets Message.Body, so the reply would go out empty; set it here as a user must.
			reply.Body = []byte("reply-to-" + string(m.Body))
			r, err := replier.SendSync(context.Background(), reply)
			if err != nil {
				f["replyError"] = err.Error()
			} else {
				f["replyStatus"] = int(r.Status)
				f["replyTopic"] = reply.Topic
			}
			emit("served", f)
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		fatal("Subscribe", err)
	}
	if err := responder.Start(); err != nil {
		fatal("PushConsumer.Start", err)
	}
	defer responder.Shutdown()
	build := func(key string) *primitive.Message {
		m := primitive.NewMessage(topic, []byte(key))
		m.WithKeys([]string{key})
		m.WithTag("TRequest")
		return m
	}
	replyFields := func(key string, r *primitive.Message, started time.Time) map[string]any {
		return map[string]any{"key": key, "body": string(r.Body), "topic": r.Topic, "props": r.GetProperties(), "ms": time.Since(started).Milliseconds()}
	}
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("request-%d", i)
		started := time.Now()
		r, err := requester.Request(context.Background(), ttl, build(key))
		if err != nil {
			emitError("Request("+key+")", err)
			continue
		}
		emit("reply", replyFields(key, r, started))
	}
	// Go client (this version): RequestAsync runs the callback twice per reply (once when the
	// reply arrives, once more from the future cache's eviction hook when the future is removed)
	// and on a timeout only when the cache's janitor evicts it (minutes later); so each key is
	// reported once and the wait is bounded here. "callbacks" counts every call.
	var mu sync.Mutex
	var callbacks int
	pending := map[string]bool{}
	done := make(chan struct{})
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("request-async-%d", i)
		started := time.Now()
		mu.Lock()
		pending[key] = true
		mu.Unlock()
		err := requester.RequestAsync(context.Background(), ttl, func(_ context.Context, r *primitive.Message, err error) {
			mu.Lock()
			defer mu.Unlock()
			callbacks++
			if !pending[key] {
				return
			}
			delete(pending, key)
			if err != nil {
				emitError("RequestAsync callback("+key+")", err)
			} else {
				emit("reply", replyFields(key, r, started))
			}
			if len(pending) == 0 {
				close(done)
			}
		}, build(key))
		if err != nil {
			emitError("RequestAsync("+key+")", err)
		}
	}
	select {
	case <-done:
	case <-time.After(ttl + 2*time.Second):
		mu.Lock()
		emitError("RequestAsync", fmt.Errorf("no reply for %d request(s) within the ttl", len(pending)))
		mu.Unlock()
	}
	time.Sleep(200 * time.Millisecond) // late duplicate callbacks are counted too
	mu.Lock()
	emit("async", map[string]any{"callbacks": callbacks})
	mu.Unlock()
}
