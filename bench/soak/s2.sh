#!/bin/bash
# scenario 2: topic/group churn: $1 topics at $2 per second
N=${1:-3000}; R=${2:-5}; S=${SOAK_DIR:-/tmp/soak9}; O=$S/out; J=$S/java; H=$(cd "$(dirname "$0")" && pwd)
CP4="$J/classes4:$(ls -td ${TMPDIR:-/tmp}/tsmq-interop-java/rocketmq4-* | head -1)/lib/*"
JF="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx128m -Xss512k -XX:ActiveProcessorCount=1 -Drocketmq.client.logUseSlf4j=false -Drocketmq.client.logRoot=$O/jlogs"
taskset -c 1 nice java $JF -cp "$CP4" Churn2 127.0.0.1:19876 127.0.0.1:20911 $N $R CH > $O/s2-churn2.out 2>$O/s2-churn2.err
echo s2 done
