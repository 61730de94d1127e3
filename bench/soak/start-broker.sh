#!/bin/bash
# start-broker.sh <tag> [extra tsmq start flags]: `tsmq start` on a fresh store $SOAK_DIR/store-<tag>
# (nameserver 19876, broker 20911, gRPC 18081, metrics 15557, no console) with the census preload,
# and the 10 s sampler writing $SOAK_DIR/out/<tag>.csv. Pids in $SOAK_DIR/broker.pid, sampler.pid.
tag=$1; shift
S=${SOAK_DIR:-/tmp/soak9}; H=$(cd "$(dirname "$0")" && pwd)
D=${SOAK_DIST_ROOT:-$(cd "$H/../.." && pwd)}
rm -rf $S/store-$tag; mkdir -p $S/out
cd $D; TSMQ_LOG_FORMAT=json SOAK_DIST=$D/dist nohup node --import $H/census.mjs dist/cli/main.js start -n 127.0.0.1:19876 -p 20911 -o grpcListenPort=18081 -o consolePort=-1 -o metricsPromExporterPort=15557 -o haListenPort=20912 --store $S/store-$tag "$@" > $S/out/broker-$tag.log 2>&1 &
pid=$!; echo $pid > $S/broker.pid
for i in $(seq 1 30); do grep -q "tsmq started" $S/out/broker-$tag.log && break; sleep 0.5; done
nohup $H/sample.sh $pid $S/out/$tag.csv >/dev/null 2>&1 &
echo $! > $S/sampler.pid
echo broker $pid sampler $(cat $S/sampler.pid)
