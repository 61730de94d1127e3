#!/bin/bash
# Compiles the soak's Java clients into $SOAK_DIR/java/classes4 (Apache RocketMQ 4.9.8 client and
# tools) and classes5 (rocketmq-client-java 5.0.x), against the peers the interop tests build
# (node scripts/run-tests.mjs test/interop/... builds them into ${TMPDIR:-/tmp}/tsmq-interop-java/).
S=${SOAK_DIR:-/tmp/soak9}; H=$(cd "$(dirname "$0")" && pwd)
L4=$(ls -td ${TMPDIR:-/tmp}/tsmq-interop-java/rocketmq4-* | head -1)/lib
L5=$(ls -td ${TMPDIR:-/tmp}/tsmq-interop-java/grpc5-* | head -1)/lib
mkdir -p $S/java $S/out/jlogs
javac -cp "$L4/*" -d $S/java/classes4 $H/java/Churn2.java $H/java/Churn4.java $H/java/Mixed4.java
javac -cp "$L5/*" -d $S/java/classes5 $H/java/Churn5.java $H/java/Mixed5.java
