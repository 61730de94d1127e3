/**
 * One run of an async task at a time: `run(task)` starts `task` when none is in flight, else
 * returns the promise of the one in flight (callers join it). The slot frees itself when the
 * run settles, so the next call starts a new run. Errors reach every caller of that run.
 */
export class SingleFlight<T> {
  private running: Promise<T> | null = null;

  run(task: () => Promise<T>): Promise<T> {
    this.running ??= task().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Resolves when the run in flight (if any) has settled; never rejects. */
  whenIdle(): Promise<void> {
    return this.running ? this.running.then(() => undefined, () => undefined) : Promise.resolve();
  }

  /** True while a run is in flight. */
  get busy(): boolean {
    return this.running !== null;
  }
}
