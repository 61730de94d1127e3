/**
 * Store compatibility with Apache RocketMQ 4.9.8 (rocketmq-store from Maven Central, run as a
 * Java peer): each side reads the other's store directory. See support/store-compat-suite.ts
 * and docs/interop.md. Skips when `java` or `mvn` is not installed.
 */
import { storeCompatSuite } from './support/store-compat-suite.js';

storeCompatSuite({
  label: '4.9.8',
  peer: 'rocketmq4',
  writerClass: 'tsmq.interop.ApacheStoreWriter',
  readerClass: 'tsmq.interop.ApacheStoreReader',
  // 4.x picks the CQ file by mtime and returns the nearest neighbour; tsmq follows 5.x (spec §8)
  times: 'none',
  longTopics: false,
});
