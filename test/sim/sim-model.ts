/**
 * What the simulation knows the store must hold: every message it ever tried to put, with what
 * the store answered, and the rules that say which of them must survive a restart.
 *
 * Message life cycle (`fate`):
 *   pending   the put has not answered (it may or may not have been appended)
 *   refused   answered without an appendResult (MESSAGE_ILLEGAL, SERVICE_NOT_AVAILABLE, ...):
 *             must never appear
 *   written   answered with an appendResult (PUT_OK, FLUSH_DISK_TIMEOUT): position known
 *   cached    in the page cache: written before a process crash (kill -9) and found again by the
 *             recovery after it. Must survive process crashes and clean restarts; a power loss
 *             may lose it (nothing forced it to the device: the store counts it as flushed, like
 *             RocketMQ, which leaves it to the kernel's writeback)
 *   durable   must survive every later restart: acknowledged (PUT_OK under SYNC_FLUSH before a
 *             power loss), covered by the flushed offset at a power loss, written before a clean
 *             shutdown, or found again after a recovery from a power loss or a clean shutdown
 *   lost      did not survive a crash it was allowed to lose: must never appear again
 *   expired   below the CommitLog min offset (deleted by retention): may no longer be read
 *
 * A message is identified by its SIMID property; its body is derived from the id, so a record
 * read back is checked byte for byte.
 */
export type Fate = 'pending' | 'refused' | 'written' | 'cached' | 'durable' | 'lost' | 'expired';

export interface SimMessage {
  id: number;
  topic: string;
  queueId: number;
  body: Buffer;
  keys: string | null;
  tags: string | null;
  fate: Fate;
  /** Put answered PUT_OK (in its own store incarnation, before any crash). */
  putOk: boolean;
  status: string | null;
  queueOffset: number | null;
  phyOffset: number | null;
  sizeBytes: number | null;
  storeTimestamp: number | null;
  /**
   * The index build may have failed for this message (the store counted an index dispatch
   * failure while it was dispatched): by design (dispatcher-chain.ts, dispatch-failures.test.ts)
   * its keys are then not in the index, so key lookups may miss it.
   */
  indexMayMiss?: boolean;
}

export class SimModel {
  readonly messages: SimMessage[] = [];
  /** topic/queueId → queue offset → message id, for positions the store reported or recovery confirmed. */
  private readonly queues = new Map<string, Map<number, number>>();
  /** Topics deleted with deleteTopics (their names are never reused). */
  readonly deletedTopics = new Set<string>();
  /** Key → ids of messages put with that key. */
  readonly keyUses = new Map<string, number[]>();

  add(m: Omit<SimMessage, 'id' | 'fate' | 'putOk' | 'status' | 'queueOffset' | 'phyOffset' | 'sizeBytes' | 'storeTimestamp'>): SimMessage {
    const msg: SimMessage = { ...m, id: this.messages.length, fate: 'pending', putOk: false, status: null, queueOffset: null, phyOffset: null, sizeBytes: null, storeTimestamp: null };
    this.messages.push(msg);
    if (m.keys !== null) {
      for (const k of m.keys.split(' ')) {
        const uses = this.keyUses.get(k) ?? [];
        uses.push(msg.id);
        this.keyUses.set(k, uses);
      }
    }
    return msg;
  }

  static queueKey(topic: string, queueId: number): string {
    return `${topic}/${queueId}`;
  }

  /** Records where the store put a message. @throws when another message already holds that queue offset. */
  place(m: SimMessage, queueOffset: number, phyOffset: number, sizeBytes: number, storeTimestamp: number): void {
    if (m.queueOffset !== null && m.queueOffset !== queueOffset) throw new Error(`message ${m.id} reported at queue offset ${queueOffset}, known at ${m.queueOffset}`);
    if (m.phyOffset !== null && m.phyOffset !== phyOffset) throw new Error(`message ${m.id} reported at physical offset ${phyOffset}, known at ${m.phyOffset}`);
    const q = this.queue(m.topic, m.queueId);
    const holder = q.get(queueOffset);
    if (holder !== undefined && holder !== m.id) {
      const other = this.messages[holder]!;
      if (other.fate === 'durable' || other.fate === 'written' || other.fate === 'cached') {
        throw new Error(`queue ${m.topic}/${m.queueId} offset ${queueOffset}: message ${m.id} placed where ${other.fate} message ${holder} is`);
      }
    }
    q.set(queueOffset, m.id);
    m.queueOffset = queueOffset;
    m.phyOffset = phyOffset;
    m.sizeBytes = sizeBytes;
    m.storeTimestamp = storeTimestamp;
  }

  queue(topic: string, queueId: number): Map<number, number> {
    const k = SimModel.queueKey(topic, queueId);
    let q = this.queues.get(k);
    if (!q) {
      q = new Map();
      this.queues.set(k, q);
    }
    return q;
  }

  /** Forgets a position (the message was lost; the offset may be reused). */
  unplace(m: SimMessage): void {
    if (m.queueOffset !== null) {
      const q = this.queue(m.topic, m.queueId);
      if (q.get(m.queueOffset) === m.id) q.delete(m.queueOffset);
    }
    m.queueOffset = null;
    m.phyOffset = null;
  }

  /** Queues the model knows (topic, queueId), deleted topics excluded. */
  knownQueues(): Array<{ topic: string; queueId: number }> {
    const out: Array<{ topic: string; queueId: number }> = [];
    for (const k of this.queues.keys()) {
      const i = k.lastIndexOf('/');
      const topic = k.slice(0, i);
      if (!this.deletedTopics.has(topic)) out.push({ topic, queueId: Number(k.slice(i + 1)) });
    }
    return out.sort((a, b) => (a.topic === b.topic ? a.queueId - b.queueId : a.topic < b.topic ? -1 : 1));
  }

  /** Messages that must be present after the next recovery (unless expired): durable ones, and cached ones unless the power failed. */
  mustSurvive(powerLoss: boolean): SimMessage[] {
    return this.messages.filter((m) => m.fate === 'durable' || (!powerLoss && m.fate === 'cached'));
  }
}
