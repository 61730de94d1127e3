package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// selectorOf: sql=<expr> gives a SQL92 selector, else tags=<expr> (default "*") a TAG selector.
func selectorOf(o opts) consumer.MessageSelector {
	if sql, ok := o["sql"]; ok {
		return consumer.MessageSelector{Type: consumer.SQL92, Expression: sql}
	}
	return consumer.MessageSelector{Type: consumer.TAG, Expression: o.str("tags", "*")}
}

// counter tracks successful deliveries and the time of the last one.
type counter struct {
	ok     atomic.Int64
	lastMs atomic.Int64
}

func (c *counter) hit() {
	c.ok.Add(1)
	c.lastMs.Store(time.Now().UnixMilli())
}

// seen records a delivery that is not counted as a success (ConsumeRetryLater) for the idle time.
func (c *counter) seen() {
	c.lastMs.Store(time.Now().UnixMilli())
}

// waitFor returns when at least expect deliveries were counted and none came for idle, or at the
// deadline (then with an "error" line).
func (c *counter) waitFor(op string, expect int, idle, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if c.ok.Load() >= int64(expect) && time.Now().UnixMilli()-c.lastMs.Load() >= idle.Milliseconds() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	if c.ok.Load() < int64(expect) {
		emitError(op, fmt.Errorf("timed out with %d of %d messages", c.ok.Load(), expect))
	}
}

func newPushConsumer(ns []string, o opts, group string, index int) rocketmq.PushConsumer {
	return newPushConsumerWith(ns, o, group, index)
}

func newPushConsumerWith(ns []string, o opts, group string, index int, extra ...consumer.Option) rocketmq.PushConsumer {
	model := consumer.Clustering
	if o.str("model", "clustering") == "broadcasting" {
		model = consumer.BroadCasting
	}
	if ak := o.str("accessKey", ""); ak != "" {
		extra = append(extra, consumer.WithCredentials(primitive.Credentials{AccessKey: ak, SecretKey: o.str("secretKey", "")}))
	}
	c, err := rocketmq.NewPushConsumer(append([]consumer.Option{
		consumer.WithNameServer(ns),
		consumer.WithGroupName(group),
		consumer.WithConsumerModel(model),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithConsumerOrder(o.str("orderly", "false") == "true"),
		consumer.WithInstance(fmt.Sprintf("go-%d-%s-%d", os.Getpid(), group, index)),
		consumer.WithMaxReconsumeTimes(int32(o.num("maxReconsumeTimes", 16))),
		consumer.WithConsumeMessageBatchMaxSize(1),
		consumer.WithRebalanceLockInterval(o.ms("lockIntervalMs", 2000)),
	}, extra...)...)
	if err != nil {
		fatal("NewPushConsumer", err)
	}
	return c
}

// cmdPush: `push topic=T group=G expect=N [tags=E | sql=E] model=clustering|broadcasting
// consumers=C orderly=false retryLater=K retryDelayLevel=L maxReconsumeTimes=X minMs=W idleMs=I
// timeoutMs=M` — C push consumers (one client instance each) consume from the first offset; a
// message whose reconsumeTimes < K is answered ConsumeRetryLater with DelayLevelWhenNextConsume=L.
// One "recv" line per delivery (consumer index, result); stops after N successful deliveries in
// all, at least W ms, and I ms without any delivery.
func cmdPush(ns []string, o opts) {
	topic, group := o.str("topic", "GoPushTopic"), o.str("group", "GID_GO_PUSH")
	retryLater, retryLevel := o.num("retryLater", 0), o.num("retryDelayLevel", 1)
	orderly := o.str("orderly", "false") == "true"
	var c counter
	consumers := make([]rocketmq.PushConsumer, 0)
	for i := 0; i < o.num("consumers", 1); i++ {
		index := i
		pc := newPushConsumer(ns, o, group, index)
		err := pc.Subscribe(topic, selectorOf(o), func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			result := consumer.ConsumeSuccess
			for _, m := range msgs {
				f := recvFields(m)
				f["consumer"] = index
				if int(m.ReconsumeTimes) < retryLater && !orderly {
					if cc, ok := primitive.GetConcurrentlyCtx(ctx); ok {
						cc.DelayLevelWhenNextConsume = retryLevel
					}
					result = consumer.ConsumeRetryLater
					f["result"] = "retry"
				} else {
					f["result"] = "success"
				}
				emit("recv", f)
			}
			for range msgs {
				if result == consumer.ConsumeSuccess {
					c.hit()
				} else {
					c.seen()
				}
			}
			return result, nil
		})
		if err != nil {
			fatal("Subscribe", err)
		}
		if err := pc.Start(); err != nil {
			fatal("PushConsumer.Start", err)
		}
		consumers = append(consumers, pc)
	}
	emit("started", map[string]any{"consumers": len(consumers)})
	time.Sleep(o.ms("minMs", 0))
	c.waitFor("push", o.num("expect", 1), o.ms("idleMs", 1000), o.ms("timeoutMs", 20000))
	for _, pc := range consumers {
		pc.Shutdown()
	}
}

// cmdDelay: `delay topic=T group=G level=L timerMs=D` — a push consumer starts first; then a
// producer sends "delay-level" with WithDelayTimeLevel(L) and "delay-timer" with
// WithDelayTimestamp(now + D ms), and "delay-now" without a delay; "sent" lines carry sentMs, "recv"
// lines recvMs.
func cmdDelay(ns []string, o opts) {
	topic, group := o.str("topic", "GoDelayTopic"), o.str("group", "GID_GO_DELAY")
	p := newProducer(ns, o)
	defer p.Shutdown()
	// the topic must exist before the consumer starts (its route is checked at Start)
	warm := primitive.NewMessage(topic, []byte("delay-warmup"))
	warm.WithTag("TWarm")
	if _, err := p.SendSync(context.Background(), warm); err != nil {
		fatal("SendSync(warm-up)", err)
	}
	var c counter
	pc := newPushConsumer(ns, o, group, 0)
	err := pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "TDelay"}, func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
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
	defer pc.Shutdown()
	time.Sleep(o.ms("settleMs", 1000))
	level, timerMs := o.num("level", 2), o.num("timerMs", 3000)
	send := func(key string, m *primitive.Message, extra map[string]any) {
		m.WithKeys([]string{key})
		m.WithTag("TDelay")
		sentMs := time.Now().UnixMilli()
		r, err := p.SendSync(context.Background(), m)
		if err != nil {
			emitError("SendSync("+key+")", err)
			return
		}
		f := sentFields(r)
		f["key"], f["sentMs"] = key, sentMs
		for k, v := range extra {
			f[k] = v
		}
		emit("sent", f)
	}
	send("delay-now", primitive.NewMessage(topic, []byte("delay-now")), nil)
	send("delay-level", primitive.NewMessage(topic, []byte("delay-level")).WithDelayTimeLevel(level), map[string]any{"level": level})
	deliverAt := time.Now().Add(time.Duration(timerMs) * time.Millisecond)
	send("delay-timer", primitive.NewMessage(topic, []byte("delay-timer")).WithDelayTimestamp(deliverAt), map[string]any{"deliverMs": deliverAt.UnixMilli()})
	c.waitFor("delay", 3, o.ms("idleMs", 500), o.ms("timeoutMs", 20000))
}

func newPullConsumer(ns []string, o opts, group string) rocketmq.PullConsumer {
	pc, err := rocketmq.NewPullConsumer(
		consumer.WithNameServer(ns),
		consumer.WithGroupName(group),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithInstance(fmt.Sprintf("go-%d-%s", os.Getpid(), group)),
		consumer.WithPullBatchSize(int32(o.num("batch", 32))),
	)
	if err != nil {
		fatal("NewPullConsumer", err)
	}
	if err := pc.Subscribe(o.str("topic", "GoPullTopic"), selectorOf(o)); err != nil {
		fatal("PullConsumer.Subscribe", err)
	}
	if err := pc.Start(); err != nil {
		fatal("PullConsumer.Start", err)
	}
	return pc
}

// cmdPull: `pull topic=T group=G [tags=E] [queues=0,2]` — PullConsumer.PullFrom on every queue of
// T (from GetTopicRouteInfo; only the listed ones with queues=...; PullFrom always asks the broker
// to hold the request when there is nothing, so an empty queue costs 20 s) from offset 0 to the queue's max offset; one "recv" line per message, one "pulled"
// line per pull (queueId, offset, status, nextBeginOffset, minOffset, maxOffset).
func cmdPull(ns []string, o opts) {
	topic := o.str("topic", "GoPullTopic")
	pc := newPullConsumer(ns, o, o.str("group", "GID_GO_PULL"))
	defer pc.Shutdown()
	mqs, err := pc.GetTopicRouteInfo(topic)
	if err != nil {
		fatal("GetTopicRouteInfo", err)
	}
	only := map[string]bool{}
	for _, q := range strings.Split(o.str("queues", ""), ",") {
		if q != "" {
			only[q] = true
		}
	}
	for _, mq := range mqs {
		if len(only) > 0 && !only[strconv.Itoa(mq.QueueId)] {
			continue
		}
		offset := int64(0)
		for pulls := 0; pulls < 100; pulls++ {
			r, err := pc.PullFrom(context.Background(), mq, offset, o.num("batch", 32))
			if err != nil {
				emitError("PullFrom", fmt.Errorf("queue %d offset %d: %w", mq.QueueId, offset, err))
				break
			}
			emit("pulled", map[string]any{
				"queueId": mq.QueueId, "offset": offset, "status": int(r.Status), "found": len(r.GetMessageExts()),
				"nextBeginOffset": r.NextBeginOffset, "minOffset": r.MinOffset, "maxOffset": r.MaxOffset,
			})
			for _, m := range r.GetMessageExts() {
				emit("recv", recvFields(m))
			}
			// stop at the queue's end: a pull there would be held by the broker (long polling)
			if r.Status != primitive.PullFound || r.NextBeginOffset <= offset || r.NextBeginOffset >= r.MaxOffset {
				break
			}
			offset = r.NextBeginOffset
		}
	}
}

// cmdPoll: `poll topic=T group=G expect=N [tags=E] minMs=W timeoutMs=M` — PullConsumer.Poll +
// ACK (ConsumeSuccess) until N messages (and at least W ms) or the deadline; then PersistOffset and one "offset" line per
// queue (CurrentOffset).
func cmdPoll(ns []string, o opts) {
	topic, expect := o.str("topic", "GoPullTopic"), o.num("expect", 1)
	pc := newPullConsumer(ns, o, o.str("group", "GID_GO_POLL"))
	defer pc.Shutdown()
	got := 0
	started := time.Now()
	deadline, minEnd := started.Add(o.ms("timeoutMs", 15000)), started.Add(o.ms("minMs", 0))
	for (got < expect || time.Now().Before(minEnd)) && time.Now().Before(deadline) {
		cr, err := pc.Poll(context.Background(), 500*time.Millisecond)
		if consumer.IsNoNewMsgError(err) {
			continue
		}
		if err != nil {
			emitError("Poll", err)
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for _, m := range cr.GetMsgList() {
			emit("recv", recvFields(m))
			got++
		}
		pc.ACK(context.Background(), cr, consumer.ConsumeSuccess)
	}
	if got < expect {
		emitError("poll", errors.New("timed out with "+strconv.Itoa(got)+" of "+strconv.Itoa(expect)+" messages"))
	}
	if err := pc.PersistOffset(context.Background(), topic); err != nil {
		emitError("PersistOffset", err)
	}
	mqs, err := pc.GetTopicRouteInfo(topic)
	if err != nil {
		emitError("GetTopicRouteInfo", err)
		return
	}
	for _, mq := range mqs {
		off, _ := pc.CurrentOffset(mq)
		emit("offset", map[string]any{"queueId": mq.QueueId, "offset": off})
	}
}
