#!/bin/bash
# scenario 1: client churn for $1 seconds
SECS=${1:-600}; S=${SOAK_DIR:-/tmp/soak9}; O=$S/out; J=$S/java; H=$(cd "$(dirname "$0")" && pwd)
CP4="$J/classes4:$(ls -td ${TMPDIR:-/tmp}/tsmq-interop-java/rocketmq4-* | head -1)/lib/*"
CP5="$J/classes5:$(ls -td ${TMPDIR:-/tmp}/tsmq-interop-java/grpc5-* | head -1)/lib/*"
JF="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx128m -Xss512k -XX:ActiveProcessorCount=1 -Drocketmq.client.logUseSlf4j=false -Drocketmq.client.logRoot=$O/jlogs"
GOP=$(ls -td ${TMPDIR:-/tmp}/tsmq-interop-go/peer-*/tsmq-go-peer | head -1)
cd "$H/../.."
node dist/cli/main.js admin update-topic -b 127.0.0.1:20911 -t ChurnTopic -r 4 -w 4 >/dev/null
node dist/cli/main.js admin update-topic -b 127.0.0.1:20911 -t GoChurn -r 4 -w 4 >/dev/null
taskset -c 1 nice java $JF -cp "$CP4" Churn4 127.0.0.1:19876 $SECS ChurnTopic > $O/s1-churn4.out 2>$O/s1-churn4.err &
taskset -c 1 nice java $JF -cp "$CP5" Churn5 127.0.0.1:18081 $SECS ChurnTopic > $O/s1-churn5.out 2>$O/s1-churn5.err &
end=$(( $(date +%s) + SECS ))
( while [ $(date +%s) -lt $end ]; do taskset -c 1 $GOP 127.0.0.1:19876 send topic=GoChurn n=3 modes=sync >> $O/s1-go.out 2>/dev/null; taskset -c 1 $GOP 127.0.0.1:19876 push topic=GoChurn group=GID_GO_CHURN expect=1 timeoutMs=4000 idleMs=200 >> $O/s1-go.out 2>/dev/null; sleep 4; done ) &
( k=0; while [ $(( $(date +%s) + 60 )) -lt $end ]; do k=$((k+1));
   taskset -c 1 nice java $JF -cp "$CP4" Churn4 127.0.0.1:19876 60 ChurnTopic kill > $O/s1-kill4-$k.out 2>&1 & p4=$!
   taskset -c 1 nice java $JF -cp "$CP5" Churn5 127.0.0.1:18081 60 ChurnTopic kill > $O/s1-kill5-$k.out 2>&1 & p5=$!
   for i in $(seq 1 40); do grep -q ready $O/s1-kill4-$k.out && grep -q ready $O/s1-kill5-$k.out && break; sleep 1; done
   kill -9 $p4 $p5; echo "killed $k $(date -u +%T)" >> $O/s1-kills.log; sleep 45; done ) &
wait
echo s1 done
