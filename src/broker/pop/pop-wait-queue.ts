/**
 * Parked pop requests (the long-polling half of Apache's `PopMessageProcessor` /
 * `PopLongPollingService`): a receive that found nothing waits here, per topic, until
 *   - a message arrives on the topic (`notifyTopic`, called by put paths and the arrival
 *     listener), or a pop state change may have made something deliverable (ack that unblocks a
 *     FIFO group, ChangeInvisibleDuration to a short time);
 *   - its own deadline passes.
 * `wait` resolves with 'notified' or 'timeout'; it never rejects.
 */

type Outcome = 'notified' | 'timeout';

interface Waiter {
  resolve: (o: Outcome) => void;
  timer: NodeJS.Timeout;
}

export class PopWaitQueue {
  private readonly waiters = new Map<string, Set<Waiter>>();

  /** Waits for a notification on `topic`, at most `timeoutMs` (≤ 0 resolves at once with 'timeout'). */
  wait(topic: string, timeoutMs: number): Promise<Outcome> {
    if (timeoutMs <= 0) return Promise.resolve('timeout');
    return new Promise((resolve) => {
      let set = this.waiters.get(topic);
      if (!set) {
        set = new Set();
        this.waiters.set(topic, set);
      }
      const w: Waiter = {
        resolve,
        timer: setTimeout(() => this.finish(topic, w, 'timeout'), timeoutMs),
      };
      set.add(w);
    });
  }

  /** Wakes every request waiting on `topic`. */
  notifyTopic(topic: string): void {
    const set = this.waiters.get(topic);
    if (!set) return;
    for (const w of [...set]) this.finish(topic, w, 'notified');
  }

  /** Wakes everyone (shutdown). */
  notifyAll(): void {
    for (const topic of [...this.waiters.keys()]) this.notifyTopic(topic);
  }

  /** Number of parked requests (tests, metrics). */
  get size(): number {
    let n = 0;
    for (const s of this.waiters.values()) n += s.size;
    return n;
  }

  private finish(topic: string, w: Waiter, outcome: Outcome): void {
    const set = this.waiters.get(topic);
    if (!set?.delete(w)) return;
    if (set.size === 0) this.waiters.delete(topic);
    clearTimeout(w.timer);
    w.resolve(outcome);
  }
}
