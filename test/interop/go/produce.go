package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// newProducer: options producerGroup, retry, sendTimeoutMs; accessKey + secretKey sign every
// request (primitive.Credentials, ACL).
func newProducer(ns []string, o opts, extra ...producer.Option) rocketmq.Producer {
	options := append([]producer.Option{
		producer.WithNameServer(ns),
		producer.WithGroupName(o.str("producerGroup", "PID_GO_PEER")),
		producer.WithRetry(o.num("retry", 2)),
		producer.WithSendMsgTimeout(o.ms("sendTimeoutMs", 5000)),
	}, extra...)
	if ak := o.str("accessKey", ""); ak != "" {
		options = append(options, producer.WithCredentials(primitive.Credentials{AccessKey: ak, SecretKey: o.str("secretKey", "")}))
	}
	p, err := rocketmq.NewProducer(options...)
	if err != nil {
		fatal("NewProducer", err)
	}
	if err := p.Start(); err != nil {
		fatal("producer.Start", err)
	}
	return p
}

// cmdSend: `send topic=T n=N modes=sync,async,oneway[,big] prefix=P` — for each mode, N messages
// with body = keys = "<prefix>-<mode>-<i>" (big: a 10 KiB body starting "<key>|"), tag "T<mode>"
// and user property idx=<i>; one "sent" line per message (oneway: without a result).
func cmdSend(ns []string, o opts) {
	topic, n, prefix := o.str("topic", "GoSendTopic"), o.num("n", 5), o.str("prefix", "go")
	p := newProducer(ns, o)
	defer p.Shutdown()
	ctx := context.Background()
	build := func(mode string, i int) *primitive.Message {
		body := fmt.Sprintf("%s-%s-%d", prefix, mode, i)
		m := primitive.NewMessage(topic, []byte(body))
		m.WithKeys([]string{body})
		m.WithTag("T" + mode)
		m.WithProperty("idx", strconv.Itoa(i))
		return m
	}
	for _, mode := range strings.Split(o.str("modes", "sync,async,oneway"), ",") {
		switch mode {
		case "sync":
			for i := 0; i < n; i++ {
				r, err := p.SendSync(ctx, build(mode, i))
				if err != nil {
					emitError("SendSync", err)
					continue
				}
				f := sentFields(r)
				f["mode"], f["key"] = mode, fmt.Sprintf("%s-%s-%d", prefix, mode, i)
				emit("sent", f)
			}
		case "async":
			var wg sync.WaitGroup
			for i := 0; i < n; i++ {
				wg.Add(1)
				key := fmt.Sprintf("%s-%s-%d", prefix, mode, i)
				err := p.SendAsync(ctx, func(_ context.Context, r *primitive.SendResult, err error) {
					defer wg.Done()
					if err != nil {
						emitError("SendAsync callback", err)
						return
					}
					f := sentFields(r)
					f["mode"], f["key"] = "async", key
					emit("sent", f)
				}, build(mode, i))
				if err != nil {
					wg.Done()
					emitError("SendAsync", err)
				}
			}
			wg.Wait()
		case "big":
			// bodies of 10 KiB ("<key>|" + 'x' padding) are zlib-compressed by the Go producer
			// (CompressMsgBodyOverHowmuch, default 4096): sysFlag COMPRESSED on the wire and in the store
			for i := 0; i < n; i++ {
				key := fmt.Sprintf("%s-%s-%d", prefix, mode, i)
				m := build(mode, i)
				m.Body = []byte(key + "|" + strings.Repeat("x", 10*1024-len(key)-1))
				r, err := p.SendSync(ctx, m)
				if err != nil {
					emitError("SendSync(big)", err)
					continue
				}
				f := sentFields(r)
				f["mode"], f["key"], f["bodyLen"] = mode, key, len(m.Body)
				emit("sent", f)
			}
		case "oneway":
			for i := 0; i < n; i++ {
				if err := p.SendOneWay(ctx, build(mode, i)); err != nil {
					emitError("SendOneWay", err)
					continue
				}
				emit("sent", map[string]any{"mode": mode, "key": fmt.Sprintf("%s-%s-%d", prefix, mode, i)})
			}
			// oneway requests are written without waiting: give the socket time before Shutdown.
			time.Sleep(300 * time.Millisecond)
		default:
			fatal("send", fmt.Errorf("unknown mode %q", mode))
		}
	}
}

// cmdBatch: `batch topic=T n=N prefix=P` — one SendSync(ctx, msgs...) of N messages (body = keys =
// "<prefix>-<i>", tag TBatch); one "sent" line for the batch.
func cmdBatch(ns []string, o opts) {
	topic, n, prefix := o.str("topic", "GoBatchTopic"), o.num("n", 10), o.str("prefix", "batch")
	p := newProducer(ns, o)
	defer p.Shutdown()
	msgs := make([]*primitive.Message, 0, n)
	for i := 0; i < n; i++ {
		body := fmt.Sprintf("%s-%d", prefix, i)
		m := primitive.NewMessage(topic, []byte(body))
		m.WithKeys([]string{body})
		m.WithTag("TBatch")
		msgs = append(msgs, m)
	}
	r, err := p.SendSync(context.Background(), msgs...)
	if err != nil {
		emitError("SendSync(batch)", err)
		return
	}
	f := sentFields(r)
	f["mode"], f["n"] = "batch", n
	emit("sent", f)
}

// cmdOrderlySend: `orderly-send topic=T orders=O steps=S` — producer.WithQueueSelector(
// NewHashQueueSelector()); message "order-<o>-step-<s>" has sharding key "order-<o>", sent in step
// order; one "sent" line each.
func cmdOrderlySend(ns []string, o opts) {
	topic, orders, steps := o.str("topic", "GoOrderTopic"), o.num("orders", 3), o.num("steps", 8)
	p := newProducer(ns, o, producer.WithQueueSelector(producer.NewHashQueueSelector()))
	defer p.Shutdown()
	for s := 0; s < steps; s++ {
		for k := 0; k < orders; k++ {
			body := fmt.Sprintf("order-%d-step-%d", k, s)
			m := primitive.NewMessage(topic, []byte(body))
			m.WithKeys([]string{body})
			m.WithShardingKey(fmt.Sprintf("order-%d", k))
			m.WithTag("TOrder")
			r, err := p.SendSync(context.Background(), m)
			if err != nil {
				emitError("SendSync(ordered)", err)
				continue
			}
			f := sentFields(r)
			f["key"], f["order"], f["step"] = body, k, s
			emit("sent", f)
		}
	}
}

// txListener decides by the message's "outcome" property: commit, rollback or unknown (UnkonwnState
// at first, CommitMessageState when the broker checks back).
type txListener struct {
	checked chan string
}

func outcomeState(outcome string, checking bool) primitive.LocalTransactionState {
	switch outcome {
	case "commit":
		return primitive.CommitMessageState
	case "rollback":
		return primitive.RollbackMessageState
	case "unknown":
		if checking {
			return primitive.CommitMessageState
		}
		return primitive.UnkonwnState
	}
	return primitive.RollbackMessageState
}

func (l *txListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	return outcomeState(m.GetProperty("outcome"), false)
}

func (l *txListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	f := recvFields(m)
	f["transactionId"] = m.TransactionId
	emit("check", f)
	select {
	case l.checked <- m.GetKeys():
	default:
	}
	return outcomeState(m.GetProperty("outcome"), true)
}

// cmdTx: `tx topic=T prefix=P waitCheckMs=W` — a TransactionProducer sends "<prefix>-commit",
// "<prefix>-rollback" and "<prefix>-unknown" (property outcome); one "sent" line each with the
// local state; then waits up to W ms for the broker's check of the unknown one ("check" lines) and
// 500 ms more so the check's answer reaches the broker.
func cmdTx(ns []string, o opts) {
	topic, prefix := o.str("topic", "GoTxTopic"), o.str("prefix", "tx")
	l := &txListener{checked: make(chan string, 16)}
	p, err := rocketmq.NewTransactionProducer(l,
		producer.WithNameServer(ns),
		producer.WithGroupName(o.str("producerGroup", "PID_GO_TX")),
		producer.WithRetry(1),
	)
	if err != nil {
		fatal("NewTransactionProducer", err)
	}
	if err := p.Start(); err != nil {
		fatal("TransactionProducer.Start", err)
	}
	defer p.Shutdown()
	for _, outcome := range []string{"commit", "rollback", "unknown"} {
		body := prefix + "-" + outcome
		m := primitive.NewMessage(topic, []byte(body))
		m.WithKeys([]string{body})
		m.WithTag("TTx")
		m.WithProperty("outcome", outcome)
		r, err := p.SendMessageInTransaction(context.Background(), m)
		if err != nil {
			emitError("SendMessageInTransaction", err)
			continue
		}
		f := sentFields(r.SendResult)
		f["key"], f["state"], f["transactionId"] = body, int(r.State), r.TransactionID
		emit("sent", f)
	}
	deadline := time.After(o.ms("waitCheckMs", 15000))
	for {
		select {
		case keys := <-l.checked:
			if keys == prefix+"-unknown" {
				time.Sleep(500 * time.Millisecond)
				return
			}
		case <-deadline:
			emitError("tx", errors.New("no transaction check for the unknown message before waitCheckMs"))
			return
		}
	}
}
