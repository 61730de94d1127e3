/**
 * Reading Prometheus' text exposition format in tests.
 *
 * `sampleSum(text, name, labels)`: the sum of every sample line `name{…} value` whose labels
 * include all of `labels` (a subset, order-free; label values with escaped quotes are read);
 * undefined when no such series is present (so "absent" and "0" stay distinguishable).
 */
export function sampleSum(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let found: number | undefined;
  for (const line of text.split('\n')) {
    const m = /^(\S+?)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = new Map([...(m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) found = (found ?? 0) + Number(m[4]);
  }
  return found;
}
