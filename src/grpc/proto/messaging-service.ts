/**
 * Loads `apache.rocketmq.v2.MessagingService` from the official protos shipped inside the npm
 * package `rocketmq-client-nodejs` (proto/apache/rocketmq/v2/service.proto, include dir proto/).
 *
 * Loader options: keepCase (fields keep their proto names, e.g. `message_queues`), longs as JS
 * numbers (offsets and timestamps stay below 2^53), enums as their names ('PRODUCER', 'OK'...;
 * numbers are accepted on output too), defaults filled in, oneofs named by a virtual field
 * (`content: 'status'`). The definition is loaded once per process.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const SERVICE_PROTO = 'apache/rocketmq/v2/service.proto';

let cached: grpc.ServiceDefinition | null = null;

/** Folder holding `apache/rocketmq/v2/*.proto`. @throws when the client package is not installed. */
export function protoIncludeDir(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('rocketmq-client-nodejs/package.json')), 'proto');
}

/** The MessagingService definition for `grpc.Server.addService`. */
export function messagingServiceDefinition(): grpc.ServiceDefinition {
  if (cached) return cached;
  const def = protoLoader.loadSync(SERVICE_PROTO, {
    includeDirs: [protoIncludeDir()],
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    apache: { rocketmq: { v2: { MessagingService: { service: grpc.ServiceDefinition } } } };
  };
  cached = pkg.apache.rocketmq.v2.MessagingService.service;
  return cached;
}
