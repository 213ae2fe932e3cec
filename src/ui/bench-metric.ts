// One metric value as every bench table and picture prints it (bench-report.ts, bench-distribution.ts,
// bench-plot-text.ts).

/** A number as the report shows it: 3 significant-ish digits (212, 38.2, 4.12); a share as a percentage. */
export function formatMetric(x: number, percent: boolean): string {
  if (percent) return `${(x * 100).toFixed(1)}%`;
  const a = Math.abs(x);
  return x.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : 2);
}
