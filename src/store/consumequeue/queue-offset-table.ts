/**
 * The in-memory "next queue offset" per (topic, queueId) used to assign QUEUEOFFSET at append
 * (RocketMQ 5.x `QueueOffsetOperator` topic-queue table). Rebuilt at start-up from each
 * ConsumeQueue's max offset; advanced by one per stored NOT/COMMIT message.
 */
export class QueueOffsetTable {
  private readonly table = new Map<string, number>();

  private static key(topic: string, queueId: number): string {
    return `${topic}-${queueId}`;
  }

  /** Next offset for the queue (0 when unknown). */
  get(topic: string, queueId: number): number {
    return this.table.get(QueueOffsetTable.key(topic, queueId)) ?? 0;
  }

  increase(topic: string, queueId: number, count: number): void {
    const k = QueueOffsetTable.key(topic, queueId);
    this.table.set(k, (this.table.get(k) ?? 0) + count);
  }

  set(topic: string, queueId: number, next: number): void {
    if (!Number.isSafeInteger(next) || next < 0) throw new RangeError(`bad queue offset ${next} for ${topic}-${queueId}`);
    this.table.set(QueueOffsetTable.key(topic, queueId), next);
  }

  remove(topic: string): void {
    const prefix = `${topic}-`;
    for (const k of [...this.table.keys()]) {
      if (k.startsWith(prefix) && /^\d+$/.test(k.slice(prefix.length))) this.table.delete(k);
    }
  }

  clear(): void {
    this.table.clear();
  }
}
