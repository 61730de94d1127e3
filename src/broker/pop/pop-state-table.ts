/**
 * In-memory pop consumption state: per (consumer group, topic, queue id), which queue offsets are
 * done and which are in flight. Pure and deterministic: it changes only by `apply(record)`, so
 * replaying the durable log (pop-state-store.ts) over a snapshot rebuilds exactly the same state.
 *
 * Per queue:
 *   ackOffset   every queue offset below it is done (acked, dead-lettered, filtered out or
 *               skipped). Mirrors the consumer offset Apache's pop keeps per group/queue.
 *   entries     offset → { attempts, invisibleUntilMs, version, acked } for offsets ≥ ackOffset
 *               that were delivered at least once (or acked out of order). Offsets ≥ ackOffset
 *               with no entry have never been delivered to this group.
 * After every change the front is normalized: while the entry at ackOffset is acked, drop it and
 * move ackOffset up.
 *
 * Records:
 *   POP   a delivery (or ChangeInvisibleDuration): entry := {attempts, invisibleUntilMs, version, acked: false}
 *   ACK   entry.acked := true (an offset with no entry gets an acked entry)
 *   MOVE  ackOffset := max(ackOffset, offset), dropping entries below; creates the queue state
 *         (this is how a group's start offset is recorded)
 *   RESET ackOffset := offset (backwards or forwards) and every entry dropped: an operator's
 *         offset reset (Apache `assignResetOffset` → the pop's `resetPopOffset`). What was in
 *         flight is forgotten; its receipt handles no longer match any entry.
 *   FORGET (not per queue) every queue state of a topic (a deleted topic) or of a group (a group
 *         deleted with its offsets) is dropped; a later record of that queue starts it anew.
 * Records for offsets below ackOffset are ignored (they were already done).
 */

export interface PopEntry {
  /** Deliveries so far (1 after the first). */
  attempts: number;
  /** Epoch ms until which the message is not handed out again. */
  invisibleUntilMs: number;
  /** Version of the current receipt handle. */
  version: number;
  acked: boolean;
}

export interface PopQueueState {
  ackOffset: number;
  entries: Map<number, PopEntry>;
}

interface QueueRef {
  group: string;
  topic: string;
  queueId: number;
}

export type PopRecord =
  | (QueueRef & { type: 'POP'; offset: number; attempts: number; invisibleUntilMs: number; version: number })
  | (QueueRef & { type: 'ACK'; offset: number; version: number })
  | (QueueRef & { type: 'MOVE'; offset: number })
  | (QueueRef & { type: 'RESET'; offset: number });

/**
 * Drops every queue state of `topic` (any group) or of `group` (any topic): the log form of
 * `PopStateTable.forget` for a deleted topic / a group deleted with its offsets.
 */
export type PopForgetRecord = { type: 'FORGET'; topic: string; group?: undefined } | { type: 'FORGET'; group: string; topic?: undefined };

/** What a pop log holds: queue records and FORGET records. */
export type PopLogRecord = PopRecord | PopForgetRecord;

/** Snapshot document (JSON) of the whole table. */
export interface PopSnapshotQueue {
  group: string;
  topic: string;
  queueId: number;
  ackOffset: number;
  /** [offset, attempts, invisibleUntilMs, version, acked (0|1)] */
  entries: Array<[number, number, number, number, number]>;
}

export function popQueueKey(group: string, topic: string, queueId: number): string {
  return `${group}\u0001${topic}\u0001${queueId}`;
}

export class PopStateTable {
  private readonly queues = new Map<string, PopQueueState & QueueRef>();
  /** Highest version seen in any record or snapshot. */
  maxVersion = 0;

  get(group: string, topic: string, queueId: number): PopQueueState | undefined {
    return this.queues.get(popQueueKey(group, topic, queueId));
  }

  /** Number of queue states (for tests and metrics). */
  get size(): number {
    return this.queues.size;
  }

  /** Applies one record. @throws Error for a record with non-integer offsets (a bug, not input). */
  apply(rec: PopLogRecord): void {
    if (rec.type === 'FORGET') {
      this.forget(forgetMatch(rec));
      return;
    }
    if (!Number.isSafeInteger(rec.offset) || rec.offset < 0) throw new Error(`pop record with bad offset ${rec.offset}`);
    const key = popQueueKey(rec.group, rec.topic, rec.queueId);
    let st = this.queues.get(key);
    if (!st) {
      st = { group: rec.group, topic: rec.topic, queueId: rec.queueId, ackOffset: rec.offset, entries: new Map() };
      this.queues.set(key, st);
    }
    if ((rec.type === 'POP' || rec.type === 'ACK') && rec.version > this.maxVersion) this.maxVersion = rec.version;
    switch (rec.type) {
      case 'RESET':
        st.ackOffset = rec.offset;
        st.entries.clear();
        break;
      case 'MOVE':
        if (rec.offset > st.ackOffset) {
          st.ackOffset = rec.offset;
          for (const off of [...st.entries.keys()]) if (off < rec.offset) st.entries.delete(off);
        }
        break;
      case 'POP':
        if (rec.offset < st.ackOffset) return;
        st.entries.set(rec.offset, { attempts: rec.attempts, invisibleUntilMs: rec.invisibleUntilMs, version: rec.version, acked: false });
        break;
      case 'ACK': {
        if (rec.offset < st.ackOffset) return;
        const e = st.entries.get(rec.offset);
        if (e) e.acked = true;
        else st.entries.set(rec.offset, { attempts: 0, invisibleUntilMs: 0, version: rec.version, acked: true });
        break;
      }
    }
    PopStateTable.normalize(st);
  }

  private static normalize(st: PopQueueState): void {
    for (let e = st.entries.get(st.ackOffset); e?.acked; e = st.entries.get(st.ackOffset)) {
      st.entries.delete(st.ackOffset);
      st.ackOffset++;
    }
  }

  /** Drops every queue state whose group and topic `match`; returns how many there were. */
  forget(match: (group: string, topic: string) => boolean): number {
    let n = 0;
    for (const [key, st] of this.queues) {
      if (match(st.group, st.topic)) {
        this.queues.delete(key);
        n++;
      }
    }
    return n;
  }

  /** All queue states of a group on a topic, by queue id. */
  queuesOf(group: string, topic: string): Map<number, PopQueueState> {
    const out = new Map<number, PopQueueState>();
    for (const st of this.queues.values()) if (st.group === group && st.topic === topic) out.set(st.queueId, st);
    return out;
  }

  /** Every queue state with its identity (snapshot order: insertion). */
  *all(): IterableIterator<PopQueueState & QueueRef> {
    yield* this.queues.values();
  }

  toSnapshot(): PopSnapshotQueue[] {
    const out: PopSnapshotQueue[] = [];
    for (const st of this.queues.values()) {
      const entries: PopSnapshotQueue['entries'] = [];
      for (const [off, e] of [...st.entries].sort((a, b) => a[0] - b[0])) {
        entries.push([off, e.attempts, e.invisibleUntilMs, e.version, e.acked ? 1 : 0]);
      }
      out.push({ group: st.group, topic: st.topic, queueId: st.queueId, ackOffset: st.ackOffset, entries });
    }
    return out;
  }

  /** Replaces the content from a snapshot. @throws Error naming the bad field. */
  loadSnapshot(queues: unknown): void {
    if (!Array.isArray(queues)) throw new Error('pop snapshot: queues is not an array');
    this.queues.clear();
    for (const q of queues as PopSnapshotQueue[]) {
      const ok = q && typeof q.group === 'string' && typeof q.topic === 'string' && Number.isSafeInteger(q.queueId) && Number.isSafeInteger(q.ackOffset) && Array.isArray(q.entries);
      if (!ok) throw new Error(`pop snapshot: bad queue entry ${JSON.stringify(q).slice(0, 200)}`);
      const entries = new Map<number, PopEntry>();
      for (const e of q.entries) {
        if (!Array.isArray(e) || e.length !== 5 || !e.every((n) => Number.isSafeInteger(n))) throw new Error(`pop snapshot: bad entry in ${q.topic}`);
        entries.set(e[0], { attempts: e[1], invisibleUntilMs: e[2], version: e[3], acked: e[4] === 1 });
        if (e[3] > this.maxVersion) this.maxVersion = e[3];
      }
      const st = { group: q.group, topic: q.topic, queueId: q.queueId, ackOffset: q.ackOffset, entries };
      PopStateTable.normalize(st);
      this.queues.set(popQueueKey(q.group, q.topic, q.queueId), st);
    }
  }
}

/** The (group, topic) predicate of a FORGET record. */
export function forgetMatch(rec: PopForgetRecord): (group: string, topic: string) => boolean {
  if (rec.topic !== undefined) {
    const topic = rec.topic;
    return (_g, t) => t === topic;
  }
  const group = rec.group;
  return (g) => g === group;
}
