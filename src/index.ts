/**
 * tsmq's public API (`import { MessageStore, startBroker } from 'tsmq'`). Everything not
 * exported here is internal and may change in any release.
 *
 * - `MessageStore.open(options)`: an embedded RocketMQ store (CommitLog, ConsumeQueues,
 *   IndexFile, recovery) with typed put/get/query and `consume()` async iteration.
 * - `startBroker(options)`: nameserver + broker (+ gRPC v2) in this process on free ports with a
 *   temporary store, for integration tests with real RocketMQ clients.
 *
 * Guide with runnable examples: docs/library.md.
 */
export { MessageStore } from './lib/embedded-store.js';
export type {
  ConsumeFrom,
  ConsumeOptions,
  GetMessageRequest,
  GetMessageResponse,
  LogLevel,
  MessageStoreOptions,
  QueryMessageRequest,
} from './lib/embedded-store.js';
export { MessageStoreError } from './lib/stored-message.js';
export type { MessageInput, PutResult, StoredMessage, StoredPutStatus } from './lib/stored-message.js';
export { startBroker } from './lib/start-broker.js';
export type { StartBrokerOptions, StartedBroker } from './lib/start-broker.js';
export type { BoundaryType, GetMessageStatus, PutMessageStatus } from './store/message-store.js';
export type { StoreConfig, FlushDiskType, BrokerRole } from './store/store-config.js';
export { StoreLockedError } from './store/recovery/store-files.js';
export { ConfigError } from './common/config/config-spec.js';
