/**
 * Resource namespaces as RocketMQ writes them into topic and group names: `<namespace>%<name>`,
 * with a retry or dead-letter prefix kept in front (`%RETRY%<namespace>%<group>`). Mirrors the
 * rules of Apache's `NamespaceUtil` (wrapNamespace, withoutNamespace, getNamespaceFromResource):
 * 4.x remoting clients with `setNamespace`/`setNamespaceV2` send names already wrapped; RocketMQ 5
 * gRPC clients send `{name, resource_namespace}` and the front wraps them (Apache's proxy does the
 * same with `GrpcConverter.wrapResourceWithNamespace`).
 */
import { TopicValidator, isSysConsumerGroup, isSystemTopic } from './topic-validator.js';

const SEPARATOR = '%';

/** The `%RETRY%` or `%DLQ%` prefix of a name, or ''. */
function retryOrDlqPrefix(resource: string): string {
  if (resource.startsWith(TopicValidator.RETRY_GROUP_TOPIC_PREFIX)) return TopicValidator.RETRY_GROUP_TOPIC_PREFIX;
  if (resource.startsWith(TopicValidator.DLQ_GROUP_TOPIC_PREFIX)) return TopicValidator.DLQ_GROUP_TOPIC_PREFIX;
  return '';
}

/**
 * `<namespace>%<resource>` (after a `%RETRY%`/`%DLQ%` prefix). Unchanged when the namespace or the
 * resource is empty, the resource is a system topic or group, or it already carries this namespace.
 */
export function wrapNamespace(namespace: string, resource: string): string {
  if (namespace.length === 0 || resource.length === 0) return resource;
  if (isSystemTopic(resource) || isSysConsumerGroup(resource)) return resource;
  const prefix = retryOrDlqPrefix(resource);
  const bare = resource.slice(prefix.length);
  if (bare.startsWith(namespace + SEPARATOR)) return resource;
  return `${prefix}${namespace}${SEPARATOR}${bare}`;
}

/** The namespace a wrapped name carries (`ns` of `ns%orders` or `%RETRY%ns%g`), or ''. */
export function namespaceOf(resource: string): string {
  const bare = resource.slice(retryOrDlqPrefix(resource).length);
  const i = bare.indexOf(SEPARATOR);
  return i > 0 ? bare.slice(0, i) : '';
}

/** The name without its namespace (`orders` of `ns%orders`, `%RETRY%g` of `%RETRY%ns%g`). */
export function withoutNamespace(resource: string): string {
  const prefix = retryOrDlqPrefix(resource);
  const bare = resource.slice(prefix.length);
  const i = bare.indexOf(SEPARATOR);
  return i > 0 ? prefix + bare.slice(i + 1) : resource;
}
