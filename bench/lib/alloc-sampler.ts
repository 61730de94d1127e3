/**
 * Preload that records where a process allocates, collected objects included (V8's sampling heap
 * profiler with includeObjectsCollectedByMajorGC/MinorGC), and writes the profile when the process
 * exits. Unlike `--heap-prof` (objects still alive at the end) this shows the allocation rate that
 * drives the young-generation GC, per allocating function.
 *
 * Usage: node --import tsx --import ./bench/lib/alloc-sampler.ts <script> …
 * Env: ALLOC_PROFILE_OUT (default alloc.heapprofile in the working directory),
 *      ALLOC_SAMPLING_BYTES (mean bytes between samples, default 4096).
 * Summarise with bench/lib/alloc-summary.ts.
 */
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';

const out = process.env.ALLOC_PROFILE_OUT ?? 'alloc.heapprofile';
const session = new Session();
session.connect();
session.post('HeapProfiler.enable');
session.post('HeapProfiler.startSampling', {
  samplingInterval: Number(process.env.ALLOC_SAMPLING_BYTES ?? 4096),
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
process.on('exit', () => {
  // the inspector session answers synchronously within the exit handler
  session.post('HeapProfiler.stopSampling', (err, r) => {
    if (err) console.error('alloc-sampler: stopSampling failed', err);
    else writeFileSync(out, JSON.stringify(r.profile));
  });
});
