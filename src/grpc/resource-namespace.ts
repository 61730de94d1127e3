/**
 * Namespaces of RocketMQ 5 clients on the gRPC front (`ClientConfiguration.setNamespace` in
 * rocketmq-client-java): every `apache.rocketmq.v2.Resource` of a request that carries a
 * `resource_namespace` is rewritten, before the ACL check and the handler, to the wrapped name
 * `<namespace>%<name>` (retry/DLQ prefix kept in front) with an empty namespace — the name a 4.x
 * client with `setNamespace` uses on the remoting port, so both reach the same topic and group.
 * Apache's proxy does the same (`GrpcConverter.wrapResourceWithNamespace`); answers carry the name
 * split again (`namespacedResource`), as Apache's `buildResource`/`buildMessage` do.
 *
 * Difference from Apache: the ACL check sees the wrapped name (`Topic:ns1%orders`), as it does for
 * remoting clients; Apache's proxy checks gRPC requests against the bare name.
 */
import type * as grpc from '@grpc/grpc-js';
import { namespaceOf, withoutNamespace, wrapNamespace } from '../common/message/namespace.js';
import type { Resource } from './proto/v2-types.js';

/** How deep a request is walked for resources (v2 requests nest them at most 4 levels down). */
const MAX_DEPTH = 6;

/** Rewrites, in place, every `{name, resource_namespace}` of a decoded v2 request (see above). */
export function wrapRequestNamespaces(value: unknown, depth = 0): void {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return;
  if (Array.isArray(value)) {
    for (const v of value) wrapRequestNamespaces(v, depth + 1);
    return;
  }
  const o = value as Record<string, unknown>;
  const ns = o.resource_namespace;
  if (typeof ns === 'string' && ns.length > 0 && typeof o.name === 'string') {
    o.name = wrapNamespace(ns, o.name);
    o.resource_namespace = '';
    return;
  }
  for (const v of Object.values(o)) wrapRequestNamespaces(v, depth + 1);
}

/** A stored topic or group name as a v2 Resource: `ns1%orders` → `{name: 'orders', resource_namespace: 'ns1'}`. */
export function namespacedResource(name: string): Resource {
  return { name: withoutNamespace(name), resource_namespace: namespaceOf(name) };
}

/** Wraps every MessagingService handler so its requests (Telemetry: each command) are rewritten first. */
export function namespaceHandlers(handlers: Record<string, grpc.UntypedHandleCall>): Record<string, grpc.UntypedHandleCall> {
  const out: Record<string, grpc.UntypedHandleCall> = {};
  for (const [rpc, handler] of Object.entries(handlers)) {
    if (rpc === 'Telemetry') {
      out[rpc] = ((call: grpc.ServerDuplexStream<unknown, unknown>) => {
        const on = call.on.bind(call);
        call.on = ((event: string, listener: (...args: unknown[]) => void) =>
          event === 'data'
            ? on('data', (cmd: unknown) => {
              wrapRequestNamespaces(cmd);
              listener(cmd);
            })
            : on(event, listener)) as typeof call.on;
        return (handler as grpc.handleBidiStreamingCall<unknown, unknown>)(call);
      }) as grpc.handleBidiStreamingCall<unknown, unknown>;
    } else {
      out[rpc] = ((call: { request?: unknown }, callback?: unknown) => {
        wrapRequestNamespaces(call.request);
        return (handler as (c: unknown, cb?: unknown) => void)(call, callback);
      }) as grpc.UntypedHandleCall;
    }
  }
  return out;
}
