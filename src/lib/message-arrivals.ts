/**
 * Wakes `consume()` iterators when a message is dispatched to their queue: the store's (or the
 * broker's) message-arriving listener calls `notify`, waiters are promises keyed by topic and
 * queue. No timers, no polling.
 */
export class MessageArrivals {
  private readonly waiters = new Map<string, Set<() => void>>();
  private closed = false;

  private static key(topic: string, queueId: number): string {
    return `${topic}\u0000${queueId}`;
  }

  /** Called after a message of `topic`/`queueId` reached its ConsumeQueue. */
  notify(topic: string, queueId: number): void {
    const set = this.waiters.get(MessageArrivals.key(topic, queueId));
    if (!set) return;
    this.waiters.delete(MessageArrivals.key(topic, queueId));
    for (const w of set) w();
  }

  /**
   * Registers a waiter for the next arrival on the queue (or close / abort) and returns its
   * promise plus a cancel function. Register first, then re-check the queue, then await: an
   * arrival in between is not lost.
   */
  wait(topic: string, queueId: number, signal?: AbortSignal): { promise: Promise<void>; cancel: () => void } {
    if (this.closed || signal?.aborted) return { promise: Promise.resolve(), cancel: () => {} };
    const key = MessageArrivals.key(topic, queueId);
    let wake!: () => void;
    const promise = new Promise<void>((resolve) => {
      wake = resolve;
    });
    let set = this.waiters.get(key);
    if (!set) this.waiters.set(key, (set = new Set()));
    const onAbort = (): void => cancel();
    const cancel = (): void => {
      this.waiters.get(key)?.delete(waiter);
      signal?.removeEventListener('abort', onAbort);
      wake();
    };
    const waiter = (): void => {
      signal?.removeEventListener('abort', onAbort);
      wake();
    };
    set.add(waiter);
    signal?.addEventListener('abort', onAbort, { once: true });
    return { promise, cancel };
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Wakes every waiter for good (store closed). */
  close(): void {
    this.closed = true;
    const all = [...this.waiters.values()];
    this.waiters.clear();
    for (const set of all) for (const w of set) w();
  }
}
