/**
 * The mqadmin command list of the interop suite (one entry per everyday command), in the order
 * an operator session would run them, with the data the Java producer/consumer create first.
 */
import type { Step } from './mqadmin-run.js';

export const CLUSTER = 'DefaultCluster';
export const BROKER_NAME = 'broker-a';
export const TOPIC = 'MqaTopic';
export const TOPIC2 = 'MqaTopic2';
export const PRODUCER_GROUP = 'PID_MQA';
export const GROUP = 'GID_MQA';
export const CLONE_GROUP = 'GID_MQA_CLONE';
export const SUB_GROUP = 'GID_MQA_ORDERLY';
export const SENT = 20;

export type Version = 4 | 5;

/** Every step; `brokerAddr` is the broker's `ip:port`, `storeDir` its storePathRootDir, `metricsUrl` its Prometheus endpoint. */
export function mqadminSteps(v: Version, brokerAddr: string, storeDir: string, metricsUrl: string): Step[] {
  const groupsFile = `${storeDir}/config/subscriptionGroup.json`;
  const m = (id: string, ...args: string[]): Step => ({ op: 'mqadmin', id, args });
  const st = (id: string, addr: string, statsName: string, statsKey: string): Step => ({ op: 'statsdata', id, brokerAddr: addr, statsName, statsKey });
  const steps: Step[] = [
    m('updateTopic', 'updateTopic', '-b', brokerAddr, '-t', TOPIC, '-r', '4', '-w', '4'),
    m('updateTopic2', 'updateTopic', '-c', CLUSTER, '-t', TOPIC2, '-r', '2', '-w', '2'),
    { op: 'produce', as: 'p1', group: PRODUCER_GROUP, topic: TOPIC, count: SENT, tag: 'TagA', keyPrefix: 'mqa' },
    { op: 'consume', group: GROUP, topic: TOPIC, expect: SENT },
    // the metrics while the Java producer and push consumer are connected
    { op: 'readurl', id: 'metricsWithClients', url: metricsUrl },
    m('clusterList', 'clusterList'),
    m('brokerStatus', 'brokerStatus', '-b', brokerAddr),
    m('getBrokerConfig', 'getBrokerConfig', '-b', brokerAddr),
    m('updateBrokerConfig', 'updateBrokerConfig', '-b', brokerAddr, '-k', 'flushConsumerOffsetInterval', '-v', '4000'),
    m('getBrokerConfigAfter', 'getBrokerConfig', '-b', brokerAddr),
    // the tool sends `regionId=Region\East` unescaped (MixAll.properties2String): Properties.load reads RegionEast
    m('updateBrokerConfigEscape', 'updateBrokerConfig', '-b', brokerAddr, '-k', 'regionId', '-v', 'Region\\East'),
    m('getBrokerConfigEscape', 'getBrokerConfig', '-b', brokerAddr),
    // 5.x only: cold-data flow control (2003 info, 2001 update / 2002 remove a group threshold),
    // CommitLog read-ahead mode (2004), RESET_MASTER_FLUSH_OFFSET (908), POP_ROLLBACK (200056)
    ...(v === 5
      ? [
          m('getColdDataFlowCtrInfo', 'getColdDataFlowCtrInfo', '-b', brokerAddr),
          m('updateColdDataFlowCtrGroupConfig', 'updateColdDataFlowCtrGroupConfig', '-b', brokerAddr, '-g', GROUP, '-v', '1048576'),
          m('updateColdDataFlowCtrGroupConfigCluster', 'updateColdDataFlowCtrGroupConfig', '-c', CLUSTER, '-g', CLONE_GROUP, '-v', '2048'),
          m('getColdDataFlowCtrInfoUpdated', 'getColdDataFlowCtrInfo', '-b', brokerAddr),
          m('removeColdDataFlowCtrGroupConfig', 'removeColdDataFlowCtrGroupConfig', '-b', brokerAddr, '-g', GROUP),
          m('getColdDataFlowCtrInfoRemoved', 'getColdDataFlowCtrInfo', '-b', brokerAddr),
          m('setCommitLogReadAheadModeRandom', 'setCommitLogReadAheadMode', '-b', brokerAddr, '-m', '1'),
          m('getBrokerConfigReadAheadOff', 'getBrokerConfig', '-b', brokerAddr),
          m('setCommitLogReadAheadModeNormal', 'setCommitLogReadAheadMode', '-b', brokerAddr, '-m', '0'),
          m('getBrokerConfigReadAheadOn', 'getBrokerConfig', '-b', brokerAddr),
          m('resetMasterFlushOffset', 'resetMasterFlushOffset', '-b', brokerAddr, '-o', '1024'),
          m('exportPopRecord', 'exportPopRecord', '-b', brokerAddr),
        ]
      : []),
    m('topicList', 'topicList'),
    m('topicRoute', 'topicRoute', '-t', TOPIC),
    m('topicStatus', 'topicStatus', '-t', TOPIC),
    m('topicClusterList', 'topicClusterList', '-t', TOPIC),
    m('updateTopicPerm', 'updateTopicPerm', '-c', CLUSTER, '-t', TOPIC2, '-p', '4'),
    m('topicRoute2', 'topicRoute', '-t', TOPIC2),
    m('updateSubGroup', 'updateSubGroup', '-b', brokerAddr, '-g', SUB_GROUP, '-r', '3', '-q', '1', '-d', 'true', ...(v === 5 ? ['-o', 'true'] : [])),
    { op: 'sleep', ms: 200 },
    { op: 'readfile', id: 'groupsAfterUpdate', path: groupsFile },
    m('consumerConnection', 'consumerConnection', '-g', GROUP),
    m('producerConnection', 'producerConnection', '-g', PRODUCER_GROUP, '-t', TOPIC),
    // 5.x only: `producer -b` (GET_ALL_PRODUCER_INFO 328)
    ...(v === 5 ? [m('producer', 'producer', '-b', brokerAddr)] : []),
    m('consumerProgressAll', 'consumerProgress'),
    m('consumerProgress', 'consumerProgress', '-g', GROUP),
    m('consumerStatus', 'consumerStatus', '-g', GROUP),
    m('brokerConsumeStats', 'brokerConsumeStats', '-b', brokerAddr),
    m('statsAll', 'statsAll', '-t', TOPIC),
    // per-queue stats (enableDetailStat, default true): Apache 5.3.3 counts puts per queue only for
    // SCHEDULE_TOPIC_XXXX and gets per queue only for the delay-level service's deliveries
    st('queuePutNumsSchedule', brokerAddr, 'QUEUE_PUT_NUMS', 'SCHEDULE_TOPIC_XXXX@0'),
    st('queuePutSizeSchedule', brokerAddr, 'QUEUE_PUT_SIZE', 'SCHEDULE_TOPIC_XXXX@0'),
    st('topicPutSizeSchedule', brokerAddr, 'TOPIC_PUT_SIZE', 'SCHEDULE_TOPIC_XXXX'),
    st('queueGetNumsSchedule', brokerAddr, 'QUEUE_GET_NUMS', 'SCHEDULE_TOPIC_XXXX@0@SCHEDULE_CONSUMER'),
    st('queueGetSizeSchedule', brokerAddr, 'QUEUE_GET_SIZE', 'SCHEDULE_TOPIC_XXXX@0@SCHEDULE_CONSUMER'),
    st('groupGetSizeSchedule', brokerAddr, 'GROUP_GET_SIZE', 'SCHEDULE_TOPIC_XXXX@SCHEDULE_CONSUMER'),
    st('queuePutNumsPlain', brokerAddr, 'QUEUE_PUT_NUMS', `${TOPIC}@0`),
    st('queueGetNumsPlain', brokerAddr, 'QUEUE_GET_NUMS', `${TOPIC}@0@${GROUP}`),
    m('exportMetrics', 'exportMetrics', '-c', CLUSTER, '-f', `${storeDir}/export`),
    { op: 'readfile', id: 'exportedMetrics', path: `${storeDir}/export/metrics.json` },
    m('queryMsgByKey', 'queryMsgByKey', '-t', TOPIC, '-k', 'mqa-0'),
    m('queryMsgById', 'queryMsgById', '-i', '${p1.offsetMsgId}', ...(v === 5 ? ['-t', TOPIC] : [])),
    m('consumeMessageDirectly', 'queryMsgById', '-i', '${p1.offsetMsgId}', '-g', GROUP, '-d', `\${${GROUP}.clientId}`, ...(v === 5 ? ['-t', TOPIC] : [])),
    m('queryMsgByOffset', 'queryMsgByOffset', '-t', TOPIC, '-b', BROKER_NAME, '-i', '${p1.queueId}', '-o', '${p1.queueOffset}'),
    m('queryMsgByUniqueKey', 'queryMsgByUniqueKey', '-t', TOPIC, '-i', '${p1.msgId}'),
    m('printMsg', 'printMsg', '-t', TOPIC, '-c', 'UTF-8', '-d', 'true'),
    m('cloneGroupOffset', 'cloneGroupOffset', '-s', GROUP, '-d', CLONE_GROUP, '-t', TOPIC),
    m('consumerProgressClone', 'consumerProgress', '-g', CLONE_GROUP),
    m('sendMessage', 'sendMessage', '-t', TOPIC, '-p', 'hello-mqadmin', '-k', 'mqadmin-key', '-c', 'TagM'),
    m('consumeMessage', 'consumeMessage', '-t', TOPIC, '-b', BROKER_NAME, '-i', '${p1.queueId}', '-o', '${p1.queueOffset}', '-c', '1'),
    m('skipAccumulatedMessage', 'skipAccumulatedMessage', '-g', GROUP, '-t', TOPIC),
    m('resetOffsetByTime', 'resetOffsetByTime', '-g', GROUP, '-t', TOPIC, '-s', '0'),
    m('wipeWritePerm', 'wipeWritePerm', '-b', BROKER_NAME),
    m('topicRouteWiped', 'topicRoute', '-t', TOPIC),
    m('addWritePerm', 'addWritePerm', '-b', BROKER_NAME),
    m('topicRouteAdded', 'topicRoute', '-t', TOPIC),
    m('updateKvConfig', 'updateKvConfig', '-s', 'ORDER_TOPIC_CONFIG', '-k', 'MqaOrderTopic', '-v', `${BROKER_NAME}:4`),
    m('getNamesrvConfig', 'getNamesrvConfig'),
    m('cleanExpiredCQ', 'cleanExpiredCQ', '-b', brokerAddr),
    m('deleteSubGroup', 'deleteSubGroup', '-b', brokerAddr, '-g', SUB_GROUP),
    { op: 'sleep', ms: 200 },
    { op: 'readfile', id: 'groupsAfterDelete', path: groupsFile },
    m('deleteTopic', 'deleteTopic', '-c', CLUSTER, '-t', TOPIC2),
    m('topicRouteDeleted', 'topicRoute', '-t', TOPIC2),
    // a Java producer may still auto-create it (its own TBW102 fallback); then it routes again
    { op: 'produce', as: 'p2', group: `${PRODUCER_GROUP}_RECREATE`, topic: TOPIC2, count: 1, tag: 'TagR', keyPrefix: 'recreated' },
    { op: 'sleep', ms: 300 },
    m('topicRouteRecreated', 'topicRoute', '-t', TOPIC2),
  ];
  // 4.9.8 has no haStatus sub command: run anyway so the tally shows it (it prints "not exist")
  steps.push(m('haStatus', 'haStatus', '-b', brokerAddr));
  return steps;
}
