/**
 * Delivery-time messages of gRPC producers (`system_properties.delivery_timestamp`, message type
 * DELAY). RocketMQ 5 serves them with its timer wheel; tsmq keeps the same property
 * (TIMER_DELIVER_MS) and topic name (`rmq_sys_wheel_timer`) but a simpler engine:
 *
 *   schedule   the message is stored in rmq_sys_wheel_timer queue 0 with REAL_TOPIC / REAL_QID /
 *              TIMER_DELIVER_MS, and its (deliver time, CommitLog offset) goes into a min-heap.
 *   tick       every `precisionMs`, due entries are re-read, put back on REAL_TOPIC / REAL_QID
 *              (TIMER_DELIVER_MS kept: consumers see it as delivery_timestamp) and marked done.
 *   progress   `<storePathRootDir>/timer/progress.json` {"committedOffset":n,"done":[offsets ≥ n]}
 *              (written durably, one write at a time): every timer queue offset below
 *              committedOffset is delivered. At start, entries from committedOffset not in
 *              `done` are loaded back into the heap.
 * Delivery is at-least-once: a crash between the re-put and the progress write delivers that
 * message again after the restart. A message is never delivered before its time.
 */
import { join } from 'node:path';
import type { Clock } from '../common/time/clock.js';
import type { Logger } from '../common/logging/logger.js';
import { silentLogger } from '../common/logging/logger.js';
import type { FileSystem } from '../common/fs/file-system.js';
import type { MessageExt, MessageInner } from '../common/message/message.js';
import { MessageConst } from '../common/message/message-const.js';
import { decodeRecord } from '../common/message/record-codec.js';
import type { MessageStore, PutMessageResult } from '../store/message-store.js';

export const TIMER_TOPIC = 'rmq_sys_wheel_timer';
const SCAN_GROUP = 'CID_SYS_RMQ_TIMER';

export interface TimerMessageServiceOptions {
  store: Pick<MessageStore, 'getMessage' | 'getMaxOffsetInQueue' | 'getMinOffsetInQueue' | 'lookMessageByOffset'>;
  putMessage: (msg: MessageInner) => Promise<PutMessageResult>;
  ensureTopic: (topic: string) => void;
  /** Called after a due message was put back on its topic. */
  onDelivered: (topic: string) => void;
  dir: string;
  fs: FileSystem;
  clock: Clock;
  precisionMs: number;
  logger?: Logger;
}

interface Due {
  deliverMs: number;
  queueOffset: number;
  commitLogOffset: number;
}

export class TimerMessageService {
  private heap: Due[] = [];
  private readonly done = new Set<number>();
  private committedOffset = 0;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private writing: Promise<void> | null = null;
  private writeAgain = false;
  private readonly logger: Logger;

  constructor(private readonly opts: TimerMessageServiceOptions) {
    this.logger = opts.logger ?? silentLogger;
  }

  private get progressPath(): string {
    return join(this.opts.dir, 'progress.json');
  }

  async start(): Promise<void> {
    const { fs, store } = this.opts;
    this.opts.ensureTopic(TIMER_TOPIC);
    fs.mkdirp(this.opts.dir);
    const raw = fs.readFile(this.progressPath);
    if (raw) {
      const doc = JSON.parse(raw.toString('utf8')) as { committedOffset?: number; done?: number[] };
      this.committedOffset = Number(doc.committedOffset) || 0;
      for (const d of doc.done ?? []) this.done.add(d);
    }
    let offset = Math.max(this.committedOffset, store.getMinOffsetInQueue(TIMER_TOPIC, 0));
    while (offset < store.getMaxOffsetInQueue(TIMER_TOPIC, 0)) {
      const got = await store.getMessage(SCAN_GROUP, TIMER_TOPIC, 0, offset, 64, null);
      for (const rec of got.messages) {
        const m = decodeRecord(rec, 0, { readBody: false });
        if (!this.done.has(m.queueOffset)) this.push({ deliverMs: deliverMsOf(m), queueOffset: m.queueOffset, commitLogOffset: m.commitLogOffset });
      }
      if (got.nextBeginOffset <= offset) break;
      offset = got.nextBeginOffset;
    }
    this.logger.info(`timer: ${this.heap.length} delayed messages pending`);
    this.timer = setInterval(() => void this.tick(), this.opts.precisionMs);
    this.timer.unref();
  }

  async shutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
    await this.persist();
  }

  /** Pending delayed messages (tests, metrics). */
  get pendingCount(): number {
    return this.heap.length;
  }

  /** Stores `msg` for delivery at `deliverMs` (epoch ms). The result is the timer-topic put. */
  async schedule(msg: MessageInner, deliverMs: number): Promise<PutMessageResult> {
    msg.properties.set(MessageConst.REAL_TOPIC, msg.topic);
    msg.properties.set(MessageConst.REAL_QID, String(msg.queueId));
    msg.properties.set(MessageConst.TIMER_DELIVER_MS, String(deliverMs));
    msg.topic = TIMER_TOPIC;
    msg.queueId = 0;
    this.opts.ensureTopic(TIMER_TOPIC);
    const r = await this.opts.putMessage(msg);
    if (r.appendResult) this.push({ deliverMs, queueOffset: r.appendResult.queueOffset, commitLogOffset: r.appendResult.wroteOffset });
    return r;
  }

  /** Delivers everything due (also run by the timer). Never rejects. */
  tick(): Promise<void> {
    this.running ??= this.deliverDue()
      .catch((e: Error) => this.logger.error(`timer delivery failed: ${e.message}`))
      .finally(() => (this.running = null));
    return this.running;
  }

  private async deliverDue(): Promise<void> {
    let delivered = false;
    while (this.heap.length > 0 && this.heap[0]!.deliverMs <= this.opts.clock.nowMs()) {
      const due = this.heap[0]!;
      const m = await this.opts.store.lookMessageByOffset(due.commitLogOffset);
      if (m && m.topic === TIMER_TOPIC) {
        const real = toRealMessage(m);
        const r = await this.opts.putMessage(real);
        if (!r.appendResult) {
          this.logger.warn(`timer: re-put of ${m.msgId} failed (${r.status}); retrying later`);
          return;
        }
        this.opts.onDelivered(real.topic);
      } else {
        this.logger.error(`timer: message at ${due.commitLogOffset} is gone; skipped`);
      }
      this.pop();
      this.done.add(due.queueOffset);
      delivered = true;
    }
    if (delivered) await this.persist();
  }

  private persist(): Promise<void> {
    if (this.writing) {
      this.writeAgain = true;
      return this.writing;
    }
    this.writing = (async () => {
      do {
        this.writeAgain = false;
        let committed = this.opts.store.getMaxOffsetInQueue(TIMER_TOPIC, 0);
        for (const d of this.heap) committed = Math.min(committed, d.queueOffset);
        this.committedOffset = Math.max(this.committedOffset, committed);
        for (const d of [...this.done]) if (d < this.committedOffset) this.done.delete(d);
        const doc = { committedOffset: this.committedOffset, done: [...this.done].sort((a, b) => a - b) };
        await this.opts.fs.writeFileDurable(this.progressPath, Buffer.from(JSON.stringify(doc)));
      } while (this.writeAgain);
    })().finally(() => (this.writing = null));
    return this.writing;
  }

  private push(d: Due): void {
    const h = this.heap;
    h.push(d);
    for (let i = h.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (h[p]!.deliverMs <= h[i]!.deliverMs) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && h[l]!.deliverMs < h[m]!.deliverMs) m = l;
      if (r < h.length && h[r]!.deliverMs < h[m]!.deliverMs) m = r;
      if (m === i) break;
      [h[m], h[i]] = [h[i]!, h[m]!];
      i = m;
    }
  }
}

function deliverMsOf(m: MessageExt): number {
  const v = Number(m.properties.get(MessageConst.TIMER_DELIVER_MS));
  return Number.isFinite(v) ? v : m.storeTimestamp;
}

/** The delayed message back on its own topic/queue. */
function toRealMessage(m: MessageExt): MessageInner {
  const props = new Map(m.properties);
  const topic = props.get(MessageConst.REAL_TOPIC) ?? m.topic;
  const queueId = Number(props.get(MessageConst.REAL_QID) ?? 0) || 0;
  props.delete(MessageConst.REAL_TOPIC);
  props.delete(MessageConst.REAL_QID);
  return {
    topic,
    queueId,
    flag: m.flag,
    body: m.body,
    properties: props,
    sysFlag: m.sysFlag,
    bornTimestamp: m.bornTimestamp,
    bornHost: m.bornHost,
    storeHost: m.storeHost,
    reconsumeTimes: m.reconsumeTimes,
    preparedTransactionOffset: 0,
  };
}
