/**
 * Test support for timers on replicas: a timerwheel file read from disk (slot → units), and the
 * GET_TIMER_CHECK_POINT (60) / GET_TIMER_METRICS (61) answers of a broker, over LeanClient.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeTimerCheckpoint } from '../../src/store/timer/timer-checkpoint.js';
import { LeanClient } from './lean-client.js';

const SLOT_BYTES = 32;

/** slot time (ms) → num, of every slot of a timerwheel file whose time is in [fromMs, toMs). */
export function wheelSlots(storeDir: string, precisionMs: number, fromMs: number, toMs: number): Map<number, number> {
  const buf = readFileSync(join(storeDir, 'timerwheel'));
  const out = new Map<number, number>();
  for (let at = 0; at + SLOT_BYTES <= buf.length; at += SLOT_BYTES) {
    const q = Number(buf.readBigInt64BE(at));
    const t = q * precisionMs;
    const num = buf.readInt32BE(at + 24);
    if (q > 0 && t >= fromMs && t < toMs && num !== 0) out.set(t, num);
  }
  return out;
}

export async function checkpointOf(addr: string): Promise<ReturnType<typeof decodeTimerCheckpoint>> {
  const c = new LeanClient(addr);
  try {
    await c.ready;
    const r = await c.invoke(60, {}, undefined, 3000);
    if (r.code !== 0) throw new Error(`GET_TIMER_CHECK_POINT: ${r.code} ${r.remark}`);
    if (r.body.length !== 56) throw new Error(`GET_TIMER_CHECK_POINT body of ${r.body.length} bytes, 56 expected`);
    return decodeTimerCheckpoint(r.body);
  } finally {
    c.close();
  }
}

export async function timerMetricsOf(addr: string): Promise<Record<string, { count: number }>> {
  const c = new LeanClient(addr);
  try {
    await c.ready;
    const r = await c.invoke(61, {}, undefined, 3000);
    if (r.code !== 0) throw new Error(`GET_TIMER_METRICS: ${r.code} ${r.remark}`);
    return (JSON.parse(r.body.toString('utf8')) as { timingCount: Record<string, { count: number }> }).timingCount;
  } finally {
    c.close();
  }
}

