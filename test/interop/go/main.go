// Command tsmq-go-peer drives Apache's Go client (github.com/apache/rocketmq-client-go/v2) against
// a RocketMQ nameserver + broker for test/interop/go-client.test.ts.
//
// Usage: tsmq-go-peer <namesrvAddr> <subcommand> [key=value ...]
//
// Every result is one JSON object per line on stdout ({"type":"sent"|"recv"|"check"|"admin"|
// "error"|"done", ...}); the client's own log goes to stderr (ROCKETMQ_GO_LOG_LEVEL, default warn).
// The process exits 0 when the scenario ran to its end (assertions are the test's job), 2 on bad
// usage and 1 when a step failed so badly that nothing more can be reported.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

var outMu sync.Mutex

// emit prints one JSON line; fields are written in Go's map order (sorted keys).
func emit(kind string, fields map[string]any) {
	fields["type"] = kind
	b, err := json.Marshal(fields)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"type":"error","op":"emit","message":%q}`, err.Error()))
	}
	outMu.Lock()
	defer outMu.Unlock()
	os.Stdout.Write(append(b, '\n'))
}

func emitError(op string, err error) {
	emit("error", map[string]any{"op": op, "message": err.Error()})
}

func fatal(op string, err error) {
	emitError(op, err)
	os.Exit(1)
}

// opts are the key=value arguments after the subcommand.
type opts map[string]string

func (o opts) str(k, def string) string {
	if v, ok := o[k]; ok {
		return v
	}
	return def
}

func (o opts) num(k string, def int) int {
	v, ok := o[k]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "option %s=%q is not an integer\n", k, v)
		os.Exit(2)
	}
	return n
}

func (o opts) ms(k string, def int) time.Duration {
	return time.Duration(o.num(k, def)) * time.Millisecond
}

// recvFields describes a received message (MessageExt) for a "recv" line.
func recvFields(m *primitive.MessageExt) map[string]any {
	body := string(m.Body)
	// the big bodies of `send modes=big` ("<key>|xxx…") are shown as "<key>|…" when intact
	if prefix, rest, found := strings.Cut(body, "|"); found && len(rest) > 256 && strings.Trim(rest, "x") == "" {
		body = prefix + "|…"
	}
	f := map[string]any{
		"topic":           m.Topic,
		"body":            body,
		"bodyLen":         len(m.Body),
		"sysFlag":         m.SysFlag,
		"keys":            m.GetKeys(),
		"tags":            m.GetTags(),
		"msgId":           m.MsgId,
		"offsetMsgId":     m.OffsetMsgId,
		"queueOffset":     m.QueueOffset,
		"commitLogOffset": m.CommitLogOffset,
		"reconsumeTimes":  m.ReconsumeTimes,
		"bornTimestamp":   m.BornTimestamp,
		"storeTimestamp":  m.StoreTimestamp,
		"recvMs":          time.Now().UnixMilli(),
		"props":           m.GetProperties(),
	}
	if m.Queue != nil {
		f["queueId"] = m.Queue.QueueId
		f["brokerName"] = m.Queue.BrokerName
	}
	return f
}

func sentFields(r *primitive.SendResult) map[string]any {
	f := map[string]any{
		"status":      int(r.Status),
		"msgId":       r.MsgID,
		"offsetMsgId": r.OffsetMsgID,
		"queueOffset": r.QueueOffset,
	}
	if r.MessageQueue != nil {
		f["queueId"] = r.MessageQueue.QueueId
		f["brokerName"] = r.MessageQueue.BrokerName
		f["topic"] = r.MessageQueue.Topic
	}
	return f
}

var commands = map[string]func(ns []string, o opts){
	"send":         cmdSend,
	"batch":        cmdBatch,
	"orderly-send": cmdOrderlySend,
	"push":         cmdPush,
	"delay":        cmdDelay,
	"tx":           cmdTx,
	"pull":         cmdPull,
	"poll":         cmdPoll,
	"admin":        cmdAdmin,
	"request":      cmdRequest,
	"trace":        cmdTrace,
}

func main() {
	if os.Getenv("ROCKETMQ_GO_LOG_LEVEL") == "" {
		rlog.SetLogLevel("warn")
	}
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: tsmq-go-peer <namesrvAddr> <subcommand> [key=value ...]")
		os.Exit(2)
	}
	cmd, ok := commands[os.Args[2]]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown subcommand %q\n", os.Args[2])
		os.Exit(2)
	}
	o := opts{}
	for _, a := range os.Args[3:] {
		k, v, found := strings.Cut(a, "=")
		if !found {
			fmt.Fprintf(os.Stderr, "argument %q is not key=value\n", a)
			os.Exit(2)
		}
		o[k] = v
	}
	start := time.Now()
	cmd(strings.Split(os.Args[1], ";"), o)
	emit("done", map[string]any{"ms": time.Since(start).Milliseconds()})
}
