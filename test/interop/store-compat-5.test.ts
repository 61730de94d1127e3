/**
 * Store compatibility with Apache RocketMQ 5.3.3 (rocketmq-store from Maven Central, run as a
 * Java peer): each side reads the other's store directory, including getOffsetInQueueByTime
 * with LOWER and UPPER boundaries. See support/store-compat-suite.ts and docs/interop.md.
 * Skips when `java` or `mvn` is not installed.
 */
import { storeCompatSuite } from './support/store-compat-suite.js';

storeCompatSuite({
  label: '5.3.3',
  peer: 'rocketmq5-store',
  writerClass: 'tsmq.interop.store5.ApacheStore5Writer',
  readerClass: 'tsmq.interop.store5.ApacheStore5Reader',
  times: 'lower+upper',
  longTopics: true,
});
