/**
 * The in-memory "next queue offset" per (topic, queueId) used to assign QUEUEOFFSET at append
 * (RocketMQ 5.x `QueueOffsetOperator` topic-queue table). Rebuilt at start-up from each
 * ConsumeQueue's max offset; advanced by one per stored NOT/COMMIT message.
 *
 * Kept as topic → queueId → next offset, so the append path does no string building and one
 * lookup pair per message (`assign`).
 */
export class QueueOffsetTable {
  private readonly table = new Map<string, Map<number, number>>();

  /** Next offset for the queue (0 when unknown). */
  get(topic: string, queueId: number): number {
    return this.table.get(topic)?.get(queueId) ?? 0;
  }

  /** Returns the next offset of the queue and advances it by one (the append path). */
  assign(topic: string, queueId: number): number {
    let byId = this.table.get(topic);
    if (byId === undefined) {
      byId = new Map();
      this.table.set(topic, byId);
    }
    const next = byId.get(queueId) ?? 0;
    byId.set(queueId, next + 1);
    return next;
  }

  increase(topic: string, queueId: number, count: number): void {
    this.set(topic, queueId, this.get(topic, queueId) + count);
  }

  set(topic: string, queueId: number, next: number): void {
    if (!Number.isSafeInteger(next) || next < 0) throw new RangeError(`bad queue offset ${next} for ${topic}-${queueId}`);
    let byId = this.table.get(topic);
    if (byId === undefined) {
      byId = new Map();
      this.table.set(topic, byId);
    }
    byId.set(queueId, next);
  }

  remove(topic: string): void {
    this.table.delete(topic);
  }

  clear(): void {
    this.table.clear();
  }
}
