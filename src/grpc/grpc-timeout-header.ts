/**
 * Accepts every `grpc-timeout` a client may send, including deadlines far beyond what a Node timer
 * can hold.
 *
 * Why: rocketmq-client-java 5.0.x opens the Telemetry stream with a deadline of 60 × 365 days,
 * sent as `grpc-timeout: 31536000M`. @grpc/grpc-js turns the header into milliseconds with a
 * 32-bit truncation (`(n * unit) | 0`) and arms `setTimeout` with it; 1.89e12 ms wraps to a
 * negative number, the timer fires at once and the stream ends with DEADLINE_EXCEEDED right after
 * it opened. A Java gRPC server (what Apache's proxy runs on) honours such a deadline.
 *
 * What: `normalizeGrpcTimeout(value)` maps one header value to what grpc-js can represent:
 * - a deadline longer than the longest Node timer (`MAX_NODE_TIMER_MS`, 2^31-1 ms ≈ 24.8 days) →
 *   `null`: the header is dropped and the call has no server-side deadline. The client still
 *   enforces its own deadline (it cancels the stream when it passes), so the server never ends a
 *   call earlier than the client asked;
 * - a representable deadline written with more than the 8 digits the gRPC spec allows (grpc-js
 *   would read only 8 of them) → the same deadline in ≤ 8 digits (`m`, or `S` rounded down);
 * - everything else (including malformed values, which grpc-js answers with INTERNAL
 *   `Invalid grpc-timeout value`) → unchanged.
 *
 * `createDeadlineTolerantServer(options)` builds a grpc.Server whose HTTP/2 servers rewrite the
 * header of every incoming stream before grpc-js reads it (a `stream` listener placed ahead of
 * grpc-js's own). grpc-js has no public hook for request headers before the deadline timer is
 * armed, so this wraps its (TypeScript-private) `createHttp2Server`; `deadlineClampInstalled`
 * tells whether that worked with the installed grpc-js (the unit test pins it).
 */
import type * as http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';

/** Longest delay `setTimeout` accepts (ms); longer ones fire after 1 ms. */
export const MAX_NODE_TIMER_MS = 2 ** 31 - 1;

export const GRPC_TIMEOUT_HEADER = 'grpc-timeout';

const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };
const TIMEOUT_PATTERN = /^\s*(\d+)\s*([HMSmun])\s*$/;
const MAX_DIGITS = 8;

/**
 * One `grpc-timeout` value → the value to hand to grpc-js, or null to drop the header (no
 * server-side deadline). See the module comment for the rules.
 */
export function normalizeGrpcTimeout(value: string): string | null {
  const m = TIMEOUT_PATTERN.exec(value);
  if (!m) return value;
  const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  if (ms > MAX_NODE_TIMER_MS) return null;
  if (m[1]!.length <= MAX_DIGITS) return value;
  return ms <= 99_999_999 ? `${Math.ceil(ms)}m` : `${Math.floor(ms / 1000)}S`;
}

/** Rewrites `headers['grpc-timeout']` in place (see normalizeGrpcTimeout). */
export function normalizeTimeoutHeader(headers: http2.IncomingHttpHeaders): void {
  const raw = headers[GRPC_TIMEOUT_HEADER];
  if (raw === undefined) return;
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined) return;
  const normalized = normalizeGrpcTimeout(value);
  if (normalized === null) delete headers[GRPC_TIMEOUT_HEADER];
  else if (normalized !== raw) headers[GRPC_TIMEOUT_HEADER] = normalized;
}

type Http2ServerFactory = (credentials: grpc.ServerCredentials) => http2.Http2Server;

export interface DeadlineTolerantServer {
  server: grpc.Server;
  /** False when the installed grpc-js no longer has the hook: huge deadlines then end calls at once. */
  deadlineClampInstalled: boolean;
}

/** A grpc.Server (same options as `new grpc.Server(options)`) that accepts any `grpc-timeout`. */
export function createDeadlineTolerantServer(options?: grpc.ServerOptions): DeadlineTolerantServer {
  const server = new grpc.Server(options);
  const internals = server as unknown as { createHttp2Server?: Http2ServerFactory };
  const original = internals.createHttp2Server;
  if (typeof original !== 'function') return { server, deadlineClampInstalled: false };
  internals.createHttp2Server = (credentials) => {
    const http2Server = original.call(server, credentials);
    http2Server.prependListener('stream', (_stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => normalizeTimeoutHeader(headers));
    return http2Server;
  };
  return { server, deadlineClampInstalled: true };
}
