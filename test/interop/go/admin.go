package main

import (
	"context"
	"sort"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// cmdAdmin: `admin topic=T brokerAddr=B cluster=C queues=Q` — admin.NewAdmin: CreateTopic(T, Q
// read/write queues on B), FetchAllTopicList, FetchPublishMessageQueues(T), FetchClusterList(T),
// GetAllSubscriptionGroup(B), DeleteTopic(T), FetchAllTopicList again; one "admin" line per call
// (op, ok, error, and what it returned).
func cmdAdmin(ns []string, o opts) {
	topic, broker, queues := o.str("topic", "GoAdminTopic"), o.str("brokerAddr", ""), o.num("queues", 3)
	a, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver(ns)))
	if err != nil {
		fatal("NewAdmin", err)
	}
	defer a.Close()
	ctx := context.Background()
	report := func(op string, err error, fields map[string]any) {
		if fields == nil {
			fields = map[string]any{}
		}
		fields["op"], fields["ok"] = op, err == nil
		if err != nil {
			fields["error"] = err.Error()
		}
		emit("admin", fields)
	}
	err = a.CreateTopic(ctx, admin.WithTopicCreate(topic), admin.WithBrokerAddrCreate(broker),
		admin.WithReadQueueNums(queues), admin.WithWriteQueueNums(queues))
	report("CreateTopic", err, nil)
	topics := func(op string) {
		list, err := a.FetchAllTopicList(ctx)
		f := map[string]any{}
		if err == nil {
			t := append([]string(nil), list.TopicList...)
			sort.Strings(t)
			f["topics"] = t
		}
		report(op, err, f)
	}
	topics("FetchAllTopicList")
	mqs, err := a.FetchPublishMessageQueues(ctx, topic)
	ids := []int{}
	for _, mq := range mqs {
		ids = append(ids, mq.QueueId)
	}
	sort.Ints(ids)
	report("FetchPublishMessageQueues", err, map[string]any{"queueIds": ids})
	clusters, err := a.FetchClusterList(topic)
	report("FetchClusterList", err, map[string]any{"clusters": clusters})
	groups, err := a.GetAllSubscriptionGroup(ctx, broker, 3*time.Second)
	f := map[string]any{}
	if err == nil {
		names := []string{}
		cfgs := map[string]any{}
		for name, g := range groups.SubscriptionGroupTable {
			names = append(names, name)
			cfgs[name] = g
		}
		sort.Strings(names)
		f["groups"], f["configs"] = names, cfgs
	}
	report("GetAllSubscriptionGroup", err, f)
	err = a.DeleteTopic(ctx, admin.WithTopicDelete(topic), admin.WithBrokerAddrDelete(broker))
	report("DeleteTopic", err, nil)
	topics("FetchAllTopicList(after delete)")
}
