/**
 * Slave side of classic replication (RocketMQ `DefaultHAClient`, spec §9.1–9.2).
 *
 * Connects to the master's HA address (`haMasterAddress`, or the one learned from the nameserver
 * via `updateMasterAddress`), reports its CommitLog max offset at once (RocketMQ may wait up to
 * haSendHeartbeatInterval for the first report), then:
 *   - every frame body is appended verbatim at the slave's CommitLog end as it arrives (a piece
 *     at a time, without reassembly); after each received chunk the new max offset is reported
 *     (the ack), then dispatch builds ConsumeQueues and index;
 *   - a frame whose offset is beyond a non-empty slave's max is a gap: protocol error, close;
 *   - a heartbeat whose offset is below the slave's max means the master's log ends there (the
 *     slave holds data the master does not have): the slave truncates to that offset (zeroing
 *     the cut bytes on disk), tells `onTruncated` listeners (the broker clamps consumer offsets,
 *     case B35) and reconnects at once;
 *   - idle: a report every `heartbeatIntervalMs`; nothing read for `housekeepingIntervalMs` ⇒
 *     close. After a close or failed connect it retries every 5 s.
 */
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { TlsClientOptions } from '../../common/tls/tls-client-config.js';
import type { Logger } from '../../common/logging/logger.js';
import { encodeConfirmHello, encodeHello, encodeReport, FrameReader, HA_CONNECT_TIMEOUT_MS, HA_RECONNECT_INTERVAL_MS, HAProtocolError } from './ha-protocol.js';
import type { TruncateReport } from './replicated-log.js';

/** What the client needs from the slave's store (DefaultMessageStore implements it). */
export interface ReplicaStore {
  getMaxPhyOffset(): number;
  /** CommitLog segment size (largest frame body accepted). */
  readonly commitLogFileSize: number;
  appendToCommitLog(offset: number, src: Buffer, start: number, length: number): void;
  /** Wakes dispatch after appends. */
  dispatchReplicated(): void;
  /** Controller mode: the master's confirm offset (bytes), or null when the master sends none. */
  confirmOffsetFromMaster(offset: number | null): void;
  /** A connection to a master was established (the confirm offset is capped at the CommitLog end). */
  masterConnected(): void;
  truncateFiles(offset: number): Promise<TruncateReport>;
}

export interface HAClientOptions {
  store: ReplicaStore;
  /** host:port of the master's HA port; null until learned. */
  masterAddress: string | null;
  heartbeatIntervalMs: number;
  housekeepingIntervalMs: number;
  /** Default 5000 ms (RocketMQ). */
  reconnectIntervalMs?: number;
  /** Connect with TLS (the master's HA port has `tls.server.mode` permissive or enforcing); absent: plain. */
  tls?: TlsClientOptions;
  /** Controller mode: sent as a hello before the first report (ha-protocol.ts `encodeHello`). */
  helloReplicaId?: number;
  logger: Logger;
}

export interface HAClientStats {
  masterAddress: string | null;
  connected: boolean;
  /** Last offset reported (acked) to the master. */
  reportedOffset: number;
  bytesReceived: number;
  connects: number;
  truncations: number;
  lastError: string | null;
}

export class HAClient {
  private masterAddress: string | null;
  private socket: Socket | null = null;
  private connected = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private tickTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private truncating = false;
  private reconnectImmediately = false;
  private reader: FrameReader | null = null;
  private reportedOffset = 0;
  private lastReadMs = 0;
  private lastWriteMs = 0;
  private bytesReceived = 0;
  private connects = 0;
  private truncations = 0;
  /** Controller mode: this connection's master said whether it sends confirm frames. */
  private confirmKnown = false;
  private lastError: string | null = null;
  private readonly truncateListeners: Array<(r: TruncateReport) => void> = [];
  private readonly opts: HAClientOptions;
  private readonly logger: Logger;

  constructor(opts: HAClientOptions) {
    this.opts = opts;
    this.logger = opts.logger;
    this.masterAddress = normalize(opts.masterAddress);
  }

  start(): void {
    this.scheduleConnect(0);
  }

  /** Registers a callback run after each truncation (diverged slave). */
  onTruncated(listener: (r: TruncateReport) => void): void {
    this.truncateListeners.push(listener);
  }

  getMasterAddress(): string | null {
    return this.masterAddress;
  }

  /** Switches to another master HA address (closes the current connection when it changes). */
  updateMasterAddress(addr: string | null): void {
    const next = normalize(addr);
    if (next === this.masterAddress) return;
    this.logger.info({ from: this.masterAddress, to: next }, 'master HA address changed');
    this.masterAddress = next;
    if (this.socket) this.socket.destroy();
    else this.scheduleConnect(0);
  }

  stats(): HAClientStats {
    return {
      masterAddress: this.masterAddress,
      connected: this.connected,
      reportedOffset: this.reportedOffset,
      bytesReceived: this.bytesReceived,
      connects: this.connects,
      truncations: this.truncations,
      lastError: this.lastError,
    };
  }

  private scheduleConnect(delayMs: number): void {
    if (this.stopped || this.reconnectTimer || this.socket || this.truncating) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connectNow();
    }, delayMs);
    this.reconnectTimer.unref();
  }

  private connectNow(): void {
    const addr = this.masterAddress;
    if (this.stopped) return;
    if (!addr) {
      this.scheduleConnect(1000);
      return;
    }
    const i = addr.lastIndexOf(':');
    const host = addr.slice(0, i);
    const port = Number(addr.slice(i + 1));
    const secure = this.opts.tls;
    const socket: Socket = secure ? tlsConnect({ host, port, ...secure }) : connect({ host, port });
    this.socket = socket;
    socket.setNoDelay(true);
    socket.setTimeout(HA_CONNECT_TIMEOUT_MS, () => {
      if (!this.connected) socket.destroy(new Error(`connect timed out after ${HA_CONNECT_TIMEOUT_MS} ms`));
    });
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      socket.setTimeout(0);
      this.onConnected(socket, addr);
    });
    socket.on('data', (chunk: Buffer) => this.onData(socket, chunk));
    socket.on('error', (e) => {
      this.lastError = e.message;
      this.logger.debug({ master: addr, err: e.message }, 'HA connection error');
    });
    socket.once('close', () => this.onClosed(socket, addr));
  }

  private onConnected(socket: Socket, addr: string): void {
    this.connected = true;
    this.connects++;
    this.reader = new FrameReader(this.opts.store.commitLogFileSize);
    this.lastReadMs = Date.now();
    this.confirmKnown = false;
    this.opts.store.masterConnected();
    // the confirm hello first: a master without the extension takes the real hello after it
    if (this.opts.helloReplicaId !== undefined) socket.write(Buffer.concat([encodeConfirmHello(), encodeHello(this.opts.helloReplicaId)]));
    this.report(this.opts.store.getMaxPhyOffset());
    this.logger.info({ master: addr, reportedOffset: this.reportedOffset }, 'connected to the master HA port');
    this.tickTimer = setInterval(() => this.tick(socket), Math.min(1000, this.opts.heartbeatIntervalMs));
    this.tickTimer.unref();
  }

  private tick(socket: Socket): void {
    if (this.socket !== socket || !this.connected) return;
    const now = Date.now();
    if (now - this.lastReadMs > this.opts.housekeepingIntervalMs) {
      this.lastError = `nothing read for ${this.opts.housekeepingIntervalMs} ms`;
      this.logger.warn({ master: this.masterAddress }, `HA housekeeping: ${this.lastError}; closing`);
      socket.destroy();
      return;
    }
    if (now - this.lastWriteMs >= this.opts.heartbeatIntervalMs) this.report(this.opts.store.getMaxPhyOffset());
  }

  private report(offset: number): void {
    const s = this.socket;
    if (!s || !this.connected || s.destroyed) return;
    this.reportedOffset = offset;
    this.lastWriteMs = Date.now();
    s.write(encodeReport(offset));
  }

  private onData(socket: Socket, chunk: Buffer): void {
    if (this.socket !== socket || this.truncating || !this.reader) return;
    this.lastReadMs = Date.now();
    this.bytesReceived += chunk.length;
    const store = this.opts.store;
    let appended = false;
    let confirmed: number | null = null;
    try {
      for (const ev of this.reader.push(chunk)) {
        if (ev.kind === 'body') {
          store.appendToCommitLog(ev.offset, ev.chunk, ev.start, ev.length);
          appended = true;
          continue;
        }
        if (ev.kind === 'confirm') {
          if (this.opts.helloReplicaId === undefined) throw new HAProtocolError('confirm frame on a classic replication connection');
          this.confirmKnown = true;
          confirmed = ev.confirmOffset;
          continue;
        }
        const max = store.getMaxPhyOffset();
        if (ev.offset < max) {
          if (ev.bodySize !== 0) throw new HAProtocolError(`master sent data for offset ${ev.offset}, below the slave's max ${max}`);
          this.truncate(socket, ev.offset, max);
          break;
        }
        if (max !== 0 && ev.offset > max) throw new HAProtocolError(`master offset ${ev.offset} is beyond the slave's max ${max}: a gap`);
        if (!this.confirmKnown && this.opts.helloReplicaId !== undefined) {
          // a confirm-capable master sends a confirm frame before anything else
          this.confirmKnown = true;
          this.logger.warn({ master: this.masterAddress }, 'the master sends no confirm offset (older tsmq): replicated messages become consumable on arrival');
          store.confirmOffsetFromMaster(null);
        }
      }
    } catch (e) {
      this.lastError = (e as Error).message;
      this.logger.error({ master: this.masterAddress, err: this.lastError }, 'HA replication failed; closing the connection');
      socket.destroy();
    }
    if (!this.truncating) {
      // ack first: the master waits for bytes held, not for ConsumeQueues (SYNC_MASTER latency)
      const max = store.getMaxPhyOffset();
      if (max > this.reportedOffset) this.report(max);
    }
    if (appended) store.dispatchReplicated();
    if (confirmed !== null && !this.truncating) store.confirmOffsetFromMaster(confirmed);
  }

  private truncate(socket: Socket, offset: number, slaveMax: number): void {
    this.truncating = true;
    this.logger.warn({ master: this.masterAddress, masterMaxOffset: offset, slaveMaxOffset: slaveMax }, 'slave holds data beyond the master: truncating');
    this.opts.store
      .truncateFiles(offset)
      .then((r) => {
        this.truncations++;
        for (const l of this.truncateListeners) {
          try {
            l(r);
          } catch (e) {
            this.logger.error({ err: e }, 'truncation listener failed');
          }
        }
      })
      .catch((e: Error) => {
        this.lastError = `truncation failed: ${e.message}`;
        this.logger.error({ err: e }, 'HA truncation failed');
      })
      .finally(() => {
        this.truncating = false;
        if (this.socket === null) this.scheduleConnect(0);
        else {
          this.reconnectImmediately = true;
          socket.destroy();
        }
      });
  }

  private onClosed(socket: Socket, addr: string): void {
    if (this.socket !== socket) return;
    this.socket = null;
    this.reader = null;
    if (this.tickTimer) clearInterval(this.tickTimer);
    this.tickTimer = null;
    const wasConnected = this.connected;
    this.connected = false;
    if (wasConnected) this.logger.info({ master: addr }, 'HA connection to the master closed');
    if (this.truncating) return; // reconnects once the truncation is done
    const now = this.reconnectImmediately || this.masterAddress !== addr;
    this.reconnectImmediately = false;
    this.scheduleConnect(now ? 0 : (this.opts.reconnectIntervalMs ?? HA_RECONNECT_INTERVAL_MS));
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    if (this.tickTimer) clearInterval(this.tickTimer);
    this.tickTimer = null;
    const s = this.socket;
    if (s) {
      const closed = new Promise<void>((r) => s.once('close', () => r()));
      s.destroy();
      await closed;
    }
    while (this.truncating) await new Promise((r) => setTimeout(r, 10));
  }
}

function normalize(addr: string | null): string | null {
  if (addr === null) return null;
  const a = addr.trim();
  if (a === '' || !/^.+:\d+$/.test(a)) return null;
  return a;
}
