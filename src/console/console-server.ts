/**
 * The web console (fastify): a static front end (src/console/web: index.html, app.js,
 * style.css; no build step) and a JSON API over the broker's own services.
 *
 *   GET  /api/status                   {state:"recovering"|"running", recovery: progress|null}
 *   GET  /api/cluster | /api/store | /api/ha | /api/rates
 *   GET  /api/topics                   POST /api/topics {topic,readQueueNums,writeQueueNums,perm}
 *   DELETE /api/topics/:topic
 *   GET  /api/groups                   POST /api/groups/:group/reset {topic,timestampMs}
 *   GET  /api/messages?topic&key | ?msgId | ?topic&queueId&offset | ?topic&beginMs&endMs
 *   POST /api/messages/resend {group, commitLogOffset}
 * Errors: 400 {error} for bad input, 404 unknown path, 401 when credentials are required
 * (console-auth.ts), 503 {state:"recovering"} before the broker is up. Nothing here throws into
 * the broker: a failed request is answered and logged.
 *
 * Binding a non-loopback address with authenticationEnabled=false is refused
 * (ConsoleRefusedError) unless consoleAllowUnauthenticated=true.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { BrokerController } from '../broker/broker-controller.js';
import { isLoopback } from '../common/net/loopback.js';
import type { AuthConfig } from '../auth/auth-config.js';
import type { AuthMetadataManager } from '../broker/auth/auth-metadata-manager.js';
import type { Logger } from '../common/logging/logger.js';
import type { ConsoleConfig } from './console-config.js';
import { checkConsoleAuth } from './console-auth.js';
import { BrokerView } from './broker-view.js';
import { ConsoleActions, ConsoleActionError } from './console-actions.js';
import { MessageSearch, SearchError } from './message-search.js';
import { RateHistory } from './rate-history.js';
import type { RecoveryProgress } from '../store/recovery/recovery-progress.js';

export class ConsoleRefusedError extends Error {}

const WEB_DIR = fileURLToPath(new URL('./web/', import.meta.url));
const STATIC: Record<string, string> = {
  '/': 'index.html',
  '/index.html': 'index.html',
  '/app.js': 'app.js',
  '/style.css': 'style.css',
};
const CONTENT_TYPES: Record<string, string> = { html: 'text/html; charset=utf-8', js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

interface Parts {
  broker: BrokerController;
  view: BrokerView;
  actions: ConsoleActions;
  search: MessageSearch;
  rates: RateHistory;
}

export interface ConsoleStartOptions {
  config: ConsoleConfig;
  logger: Logger;
  /** The running broker; omit to start while it recovers and call setBroker() once it listens. */
  broker?: BrokerController;
  /** authenticationEnabled and the ACL users, when there is no broker yet (else the broker's). */
  auth?: { config: AuthConfig; metadata: AuthMetadataManager | null };
}

export class ConsoleServer {
  private parts: Parts | null = null;
  private recovery: RecoveryProgress | null = null;
  private auth: { enabled: boolean; metadata: AuthMetadataManager | null };

  private constructor(
    private readonly app: FastifyInstance,
    private readonly logger: Logger,
    authEnabled: boolean,
  ) {
    this.auth = { enabled: authEnabled, metadata: null };
  }

  /** `http://host:port` the console listens on. */
  get url(): string {
    const a = this.app.server.address();
    if (!a || typeof a === 'string') return '';
    const host = a.address.includes(':') ? `[${a.address}]` : a.address;
    return `http://${host}:${a.port}`;
  }

  get port(): number {
    const a = this.app.server.address();
    return a && typeof a !== 'string' ? a.port : -1;
  }

  /** @throws ConsoleRefusedError (unsafe bind), listen errors (EADDRINUSE). */
  static async start(opts: ConsoleStartOptions): Promise<ConsoleServer> {
    const authEnabled = opts.broker ? opts.broker.authConfig.authenticationEnabled : (opts.auth?.config.authenticationEnabled ?? false);
    if (!isLoopback(opts.config.host) && !authEnabled && !opts.config.allowUnauthenticated) {
      throw new ConsoleRefusedError(
        `refusing to start the console on ${opts.config.host}: authenticationEnabled=false, so anyone reaching it could delete topics and reset offsets; set authenticationEnabled=true (docs/security.md), bind consoleListenHost=127.0.0.1, or set consoleAllowUnauthenticated=true`,
      );
    }
    const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
    const server = new ConsoleServer(app, opts.logger, authEnabled);
    server.auth.metadata = opts.broker?.authMetadata ?? opts.auth?.metadata ?? null;
    server.routes();
    await app.listen({ host: opts.config.host, port: opts.config.port });
    if (opts.broker) server.setBroker(opts.broker);
    opts.logger.info(`console listening on ${server.url}`);
    return server;
  }

  /** The broker is up: the API serves it from now on. */
  setBroker(broker: BrokerController): void {
    const rates = new RateHistory(broker);
    rates.start();
    this.parts = { broker, view: new BrokerView(broker), actions: new ConsoleActions(broker), search: new MessageSearch(broker), rates };
    this.auth = { enabled: broker.authConfig.authenticationEnabled, metadata: broker.authMetadata };
    this.recovery = null;
  }

  /** Recovery progress shown on every page until setBroker(). */
  setRecoveryProgress(p: RecoveryProgress): void {
    this.recovery = p;
  }

  async close(): Promise<void> {
    this.parts?.rates.stop();
    await this.app.close();
  }

  private routes(): void {
    const app = this.app;
    app.addHook('onRequest', async (req, reply) => {
      if (!this.auth.enabled) return;
      if (!this.auth.metadata) return reply.code(503).send({ error: 'authentication metadata not loaded yet' });
      const r = checkConsoleAuth(true, this.auth.metadata, req.headers.authorization);
      if (!r.ok) return reply.code(401).header('www-authenticate', 'Basic realm="tsmq", charset="UTF-8"').send({ error: r.reason });
    });
    app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
      if (err instanceof SearchError || err instanceof ConsoleActionError) return reply.code(400).send({ error: err.message });
      if (err.statusCode && err.statusCode < 500) return reply.code(err.statusCode).send({ error: err.message });
      this.logger.error(`console request failed: ${err.message}`);
      return reply.code(500).send({ error: err.message });
    });
    for (const [path, file] of Object.entries(STATIC)) {
      app.get(path, async (_req, reply) => {
        const text = await readFile(join(WEB_DIR, file), 'utf8');
        return reply.type(CONTENT_TYPES[file.split('.').pop()!]!).header('cache-control', 'no-cache').send(text);
      });
    }
    app.get('/api/status', async () => ({ state: this.parts ? 'running' : 'recovering', recovery: this.recovery }));
    const need = (reply: FastifyReply): Parts | null => {
      if (!this.parts) {
        void reply.code(503).send({ state: 'recovering', recovery: this.recovery });
        return null;
      }
      return this.parts;
    };
    app.get('/api/cluster', async (_q, reply) => (need(reply) ? this.parts!.view.cluster() : reply));
    app.get('/api/topics', async (_q, reply) => (need(reply) ? this.parts!.view.topics() : reply));
    app.get('/api/groups', async (_q, reply) => (need(reply) ? this.parts!.view.groups() : reply));
    app.get('/api/store', async (_q, reply) => (need(reply) ? this.parts!.view.store() : reply));
    app.get('/api/ha', async (_q, reply) => (need(reply) ? this.parts!.view.ha() : reply));
    app.get('/api/rates', async (_q, reply) => (need(reply) ? this.parts!.rates.series() : reply));
    app.post('/api/topics', async (req, reply) => {
      const p = need(reply);
      if (!p) return reply;
      const b = (req.body ?? {}) as Record<string, unknown>;
      const topic = String(b.topic ?? '').trim();
      if (!topic) throw new SearchError('topic is required');
      await p.actions.upsertTopic({ topic, readQueueNums: int(b.readQueueNums, 4), writeQueueNums: int(b.writeQueueNums, 4), perm: int(b.perm, 6), order: b.order === true });
      return { ok: true };
    });
    app.delete('/api/topics/:topic', async (req, reply) => {
      const p = need(reply);
      if (!p) return reply;
      await p.actions.deleteTopic((req.params as { topic: string }).topic);
      return { ok: true };
    });
    app.post('/api/groups/:group/reset', async (req, reply) => {
      const p = need(reply);
      if (!p) return reply;
      const b = (req.body ?? {}) as Record<string, unknown>;
      const offsets = await p.actions.resetOffsetByTime((req.params as { group: string }).group, String(b.topic ?? ''), int(b.timestampMs, NaN));
      return { ok: true, offsets };
    });
    app.get('/api/messages', async (req, reply) => {
      const p = need(reply);
      if (!p) return reply;
      const q = req.query as Record<string, string | undefined>;
      if (q.msgId) return p.search.byId(q.msgId.trim());
      if (q.key) return p.search.byKey(q.topic, q.key.trim());
      if (q.queueId !== undefined && q.offset !== undefined) return p.search.byQueueOffset(q.topic, Number(q.queueId), Number(q.offset));
      if (q.beginMs !== undefined || q.endMs !== undefined) return p.search.byTime(q.topic, Number(q.beginMs ?? 0), Number(q.endMs ?? Date.now()));
      throw new SearchError('give msgId, or topic with key, queueId + offset, or beginMs/endMs');
    });
    app.post('/api/messages/resend', async (req, reply) => {
      const p = need(reply);
      if (!p) return reply;
      const b = (req.body ?? {}) as Record<string, unknown>;
      return { ok: true, ...(await p.actions.resendDlqMessage(String(b.group ?? ''), int(b.commitLogOffset, NaN))) };
    });
  }
}

function int(v: unknown, dflt: number): number {
  if (v === undefined || v === null || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new SearchError(`not an integer: ${String(v)}`);
  return n;
}
