#!/bin/bash
# scenario 4: steady mixed load for $1 seconds
SECS=${1:-900}; S=${SOAK_DIR:-/tmp/soak9}; O=$S/out; J=$S/java; H=$(cd "$(dirname "$0")" && pwd)
CP4="$J/classes4:$(ls -td ${TMPDIR:-/tmp}/tsmq-interop-java/rocketmq4-* | head -1)/lib/*"
CP5="$J/classes5:$(ls -td ${TMPDIR:-/tmp}/tsmq-interop-java/grpc5-* | head -1)/lib/*"
JF="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx128m -Xss512k -XX:ActiveProcessorCount=1 -Drocketmq.client.logUseSlf4j=false -Drocketmq.client.logRoot=$O/jlogs"
cd "$H/../.."
for t in MixedTopic MixedTxTopic Mixed5Topic; do node dist/cli/main.js admin update-topic -b 127.0.0.1:20911 -t $t -r 4 -w 4 >/dev/null; done
node dist/cli/main.js admin update-topic -b 127.0.0.1:20911 -t Mixed5Delay -r 4 -w 4 -a +message.type=DELAY >/dev/null
taskset -c 1 nice java $JF -cp "$CP4" Mixed4 127.0.0.1:19876 $SECS > $O/s4-mixed4.out 2>$O/s4-mixed4.err &
taskset -c 1 nice java $JF -cp "$CP5" Mixed5 127.0.0.1:18081 $SECS > $O/s4-mixed5.out 2>$O/s4-mixed5.err &
wait
echo s4 done
