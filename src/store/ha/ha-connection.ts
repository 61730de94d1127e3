/**
 * Master side of one slave connection (RocketMQ `DefaultHAConnection`, spec §9.1–9.2).
 *
 * Reading: offset reports (8 bytes). Per received chunk the newest complete report counts.
 *   - A report must be a safe integer ≥ 0 and ≤ the master's CommitLog max offset. A report
 *     beyond it closes the connection and does NOT count as an ack (case B32); when it is the
 *     first report, a heartbeat carrying the master's max offset is sent before closing so a
 *     tsmq slave can truncate its diverged tail (docs/ha.md).
 *   - After the first report, an ack must not exceed what this connection has delivered
 *     (start offset + bytes sent); otherwise the connection is closed, without counting it.
 *   - The first report is where sending starts: its value, or the master's CommitLog min offset
 *     when it is 0 (an empty slave). tsmq replicates everything the master still has; RocketMQ
 *     starts an empty slave at the master's last segment.
 *   - A non-zero first report below the master's min offset cannot be served (the data is gone)
 *     and closes the connection with an error log.
 * Writing: frames `[offset][size][bytes]` of at most `transferBatchSize` bytes, never across a
 * segment end, from `nextTransferFromWhere` up to the readable end; bytes are committed to the
 * page cache (pwrite) before they are shipped, so a crash of the master process never leaves a
 * slave holding bytes the master lost. Heartbeat header when nothing was written for
 * `heartbeatIntervalMs`. Waits ≤ 100 ms (or until woken by an append) when idle; honours socket
 * back-pressure.
 * Confirm offset (controller mode, ha-protocol.ts): to a slave that sent the confirm hello, a
 * confirm frame with `host.confirmOffset()` before the first data or heartbeat frame and then
 * whenever the value changed (checked before every frame; acks and appends wake the loop).
 * Housekeeping: nothing read for `housekeepingIntervalMs` ⇒ close.
 */
import type { Socket } from 'node:net';
import type { Logger } from '../../common/logging/logger.js';
import type { CommitLog } from '../commitlog/commit-log.js';
import { encodeConfirmFrame, encodeHeartbeat, HA_FRAME_HEADER_BYTES, ReportReader, writeFrameHeader } from './ha-protocol.js';

export interface HAConnectionHost {
  readonly commitLog: CommitLog;
  readonly transferBatchSize: number;
  readonly heartbeatIntervalMs: number;
  readonly housekeepingIntervalMs: number;
  readonly logger: Logger;
  /** The confirm offset sent to confirm-capable slaves (CommitLog bytes). */
  confirmOffset(): number;
  /** A valid ack arrived on `conn`. */
  onAck(conn: HAConnection, offset: number): void;
  onClose(conn: HAConnection): void;
  /** Resolves on the next append or after `ms`. */
  waitForData(ms: number): Promise<void>;
}

export interface HAConnectionStats {
  remoteAddress: string;
  /** First report (-1 before it arrived). */
  requestOffset: number;
  /** Latest valid ack (-1 before the first report). */
  ackOffset: number;
  /** Next CommitLog offset to send (-1 before the first report). */
  nextTransferFromWhere: number;
  bytesSent: number;
}

export class HAConnection {
  readonly remoteAddress: string;
  private requestOffset = -1;
  private ackOffset = -1;
  private nextTransferFromWhere = -1;
  private bytesSent = 0;
  /** Last confirm offset sent (-1: none yet). */
  private confirmSent = -1;
  private lastReadMs = Date.now();
  private lastWriteMs = 0;
  private closed = false;
  /** A commit write the next transfer waits for (the bytes to send are still being written to the page cache). */
  private commitWait: Promise<Error | null> | null = null;
  private readonly reports = new ReportReader();
  private readonly housekeeping: NodeJS.Timeout;

  constructor(
    private readonly socket: Socket,
    private readonly host: HAConnectionHost,
  ) {
    this.remoteAddress = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (e) => this.close(`socket error: ${e.message}`, 'debug'));
    socket.on('close', () => this.close('closed by the slave', 'info'));
    this.housekeeping = setInterval(() => {
      if (Date.now() - this.lastReadMs > host.housekeepingIntervalMs) this.close(`nothing read for ${host.housekeepingIntervalMs} ms`, 'warn');
    }, Math.min(1000, host.housekeepingIntervalMs));
    this.housekeeping.unref();
    void this.transferLoop();
  }

  /** Replica id from a controller-mode hello (ha-protocol.ts `encodeHello`), null for a classic slave. */
  get replicaId(): number | null {
    return this.reports.helloReplicaId;
  }

  /** Latest valid ack (-1 before the first report). */
  get ack(): number {
    return this.ackOffset;
  }

  /** True once the slave sent a valid first report (counts as a connected slave). */
  get established(): boolean {
    return this.requestOffset >= 0 && !this.closed;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  stats(): HAConnectionStats {
    return {
      remoteAddress: this.remoteAddress,
      requestOffset: this.requestOffset,
      ackOffset: this.ackOffset,
      nextTransferFromWhere: this.nextTransferFromWhere,
      bytesSent: this.bytesSent,
    };
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    this.lastReadMs = Date.now();
    const offset = this.reports.push(chunk);
    if (offset !== null) this.onReport(offset);
  }

  private onReport(offset: number): void {
    const cl = this.host.commitLog;
    const masterMax = cl.getMaxOffset();
    if (Number.isNaN(offset) || offset > masterMax) {
      const first = this.requestOffset < 0;
      if (first && !Number.isNaN(offset)) this.socket.write(encodeHeartbeat(masterMax)); // tells a diverged tsmq slave where to truncate
      this.close(`slave reported offset ${Number.isNaN(offset) ? 'out of range' : offset} beyond the master's max offset ${masterMax}; not counted as an ack`, 'warn');
      return;
    }
    if (this.requestOffset < 0) {
      const min = cl.getMinOffset();
      if (offset !== 0 && offset < min) {
        this.close(`slave offset ${offset} is below the master's min offset ${min}: the data it needs is deleted; rebuild the slave from an empty store`, 'error');
        return;
      }
      this.requestOffset = offset;
      this.nextTransferFromWhere = offset === 0 ? min : offset;
      this.host.logger.info({ slave: this.remoteAddress, requestOffset: offset, startFrom: this.nextTransferFromWhere }, 'slave connected');
    } else if (offset > this.nextTransferFromWhere) {
      this.close(`slave acked ${offset} but only ${this.nextTransferFromWhere} was sent on this connection; not counted`, 'warn');
      return;
    }
    if (offset > this.ackOffset) this.ackOffset = offset;
    this.host.onAck(this, offset);
  }

  private async transferLoop(): Promise<void> {
    while (!this.closed) {
      let wrote = false;
      try {
        if (this.nextTransferFromWhere >= 0) this.sendConfirmIfChanged();
        wrote = this.nextTransferFromWhere >= 0 ? this.transferOnce() : false;
      } catch (e) {
        this.close(`transfer failed: ${(e as Error).message}`, 'error');
        return;
      }
      if (wrote) {
        if (this.socket.writableNeedDrain) await this.drain();
        continue;
      }
      const commitWait = this.commitWait;
      if (commitWait !== null) {
        this.commitWait = null;
        await commitWait;
        continue;
      }
      if (this.nextTransferFromWhere >= 0 && Date.now() - this.lastWriteMs > this.host.heartbeatIntervalMs) {
        this.write(encodeHeartbeat(this.nextTransferFromWhere));
      }
      await this.host.waitForData(100);
    }
  }

  /** Confirm-capable slave: a confirm frame when the confirm offset differs from the last one sent. */
  private sendConfirmIfChanged(): void {
    if (!this.reports.confirmCapable) return;
    const c = this.host.confirmOffset();
    if (c === this.confirmSent) return;
    this.confirmSent = c;
    this.write(encodeConfirmFrame(c));
  }

  /** Sends one frame if data is readable at nextTransferFromWhere; returns whether it did. */
  private transferOnce(): boolean {
    const from = this.nextTransferFromWhere;
    const mf = this.host.commitLog.mfq.findMappedFileByOffset(from);
    if (!mf) return false;
    const pos = from - mf.fileFromOffset;
    const size = Math.min(this.host.transferBatchSize, mf.getWrotePosition() - pos);
    if (size <= 0) return false;
    if (mf.getCommittedPosition() < pos + size) {
      try {
        mf.commitNow(); // page cache first, then the slave
      } catch {
        // a failing write (disk full) is the store's to report; the bytes are still readable
      }
      if (mf.isWriteInFlight() && mf.getCommittedPosition() < pos + size) {
        // part of them is being written on the libuv pool: send once it is in the page cache
        this.commitWait = mf.whenCommitted(pos + size);
        if (this.commitWait !== null) return false;
      }
    }
    const frame = Buffer.allocUnsafe(HA_FRAME_HEADER_BYTES + size);
    if (!mf.readInto(pos, frame, HA_FRAME_HEADER_BYTES, size)) return false; // segment going away
    writeFrameHeader(frame, 0, from, size);
    this.nextTransferFromWhere = from + size;
    this.bytesSent += size;
    this.write(frame);
    return true;
  }

  private write(buf: Buffer): void {
    this.lastWriteMs = Date.now();
    this.socket.write(buf);
  }

  private drain(): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      const done = (): void => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  /** Closes the connection (idempotent). */
  close(reason: string, level: 'debug' | 'info' | 'warn' | 'error' = 'info'): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.housekeeping);
    this.host.logger[level]({ slave: this.remoteAddress, ackOffset: this.ackOffset, reason }, 'HA connection closed');
    this.socket.end(); // flushes what is queued (e.g. the truncation hint), then FIN
    setTimeout(() => this.socket.destroy(), 1000).unref();
    this.host.onClose(this);
  }
}
