/**
 * A time-boxed load with a fixed number of requests in flight: each completed request starts the
 * next one, so `window` is the concurrency (like `window` producers each sending synchronously,
 * or pipelining clients). Latency is per request, issue to reply. Used for tsmq (raw remoting
 * frames, ali-ons) and its peer (Redis XADD) alike, so the two see the same load shape.
 */
import { LatencyRecorder, nowMs } from './stats.js';

export interface WindowRun {
  ok: number;
  failed: number;
  /** Messages carried by the successful requests (a batch request carries several). */
  messages: number;
  elapsedMs: number;
  latency: LatencyRecorder;
  firstError: string | null;
}

/**
 * Keeps `window` calls of `issue(i)` in flight for `durationMs`, then waits for the stragglers.
 * `issue` resolves to the number of messages it carried, or throws.
 */
export async function runWindowed(window: number, durationMs: number, issue: (i: number) => Promise<number>): Promise<WindowRun> {
  const run: WindowRun = { ok: 0, failed: 0, messages: 0, elapsedMs: 0, latency: new LatencyRecorder(1 << 18), firstError: null };
  const t0 = nowMs();
  const deadline = t0 + durationMs;
  let next = 0;
  const lane = async (): Promise<void> => {
    while (nowMs() < deadline) {
      const i = next++;
      const s = nowMs();
      try {
        const n = await issue(i);
        run.latency.add(nowMs() - s);
        run.ok++;
        run.messages += n;
      } catch (e) {
        run.failed++;
        run.firstError ??= (e as Error)?.message ?? String(e);
        if (run.failed > 1000 && run.ok === 0) throw new Error(`every request fails: ${run.firstError}`);
      }
    }
  };
  await Promise.all(Array.from({ length: window }, lane));
  run.elapsedMs = nowMs() - t0;
  return run;
}
