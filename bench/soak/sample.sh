#!/bin/bash
# sample.sh <pid> <csv> : every 10 s, RSS/fds/heap/handles/lag/CPU/counts
pid=$1; csv=$2; tck=$(getconf CLK_TCK)
echo "ts,rss_mb,fds,heap_used_mb,active_handles,active_resources,timeouts,el_lag_p99_ms,cpu_s,threads,topics,groups,prod_conn,cons_conn,metric_series" > $csv
while kill -0 $pid 2>/dev/null; do
  rss=$(awk '/VmRSS/{print int($2/1024)}' /proc/$pid/status)
  thr=$(awk '/Threads/{print $2}' /proc/$pid/status)
  fds=$(ls /proc/$pid/fd | wc -l)
  read ut st < <(awk '{print $14, $15}' /proc/$pid/stat)
  cpu=$(echo "scale=2; ($ut+$st)/$tck" | bc)
  m=$(curl -s -m 5 127.0.0.1:${METRICS_PORT:-15557}/metrics | grep -v '^#')
  g() { echo "$m" | grep -E "^$1[{ ]" | awk '{s+=$NF} END {printf "%.0f", s}'; }
  heap=$(echo "$m" | grep -E '^nodejs_heap_size_used_bytes' | awk '{printf "%.1f", $NF/1048576}')
  lag=$(echo "$m" | grep -E '^nodejs_eventloop_lag_p99_seconds' | awk '{printf "%.1f", $NF*1000}')
  tmo=$(echo "$m" | grep -E '^nodejs_active_resources\{.*type="Timeout"' | awk '{print $NF}')
  series=$(echo "$m" | wc -l)
  echo "$(date -u +%H:%M:%S),$rss,$fds,$heap,$(g nodejs_active_handles_total),$(g nodejs_active_resources_total),${tmo:-0},$lag,$cpu,$thr,$(g rocketmq_topic_number),$(g rocketmq_consumer_group_number),$(g rocketmq_producer_connections),$(g rocketmq_consumer_connections),$series" >> $csv
  sleep 10
done
