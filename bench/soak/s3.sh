#!/bin/bash
# scenario 3: idle connections holding long polls: s3.sh [pullConns] [popConns] [seconds] [sendEverySec]
S=${SOAK_DIR:-/tmp/soak9}; H=$(cd "$(dirname "$0")" && pwd)
cd "$H/../.." && taskset -c 1 node --import tsx bench/soak/idle-long-polls.ts 127.0.0.1:20911 ${1:-1500} ${2:-500} ${3:-360} ${4:-20} > $S/out/s3-client.out 2>&1
echo s3 done
