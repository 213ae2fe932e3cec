/**
 * A compact duration: 5s, 1m35s, 2h13m, 2d3h. `pad` zero-pads the second unit (5m02s, 3d04h) so
 * columns of a table line up.
 */
export function formatDuration(ms: number, pad = false): string {
  const two = (n: number) => (pad ? String(n).padStart(2, '0') : String(n));
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${two(s % 60)}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${two(m % 60)}m`;
  return `${Math.floor(h / 24)}d${two(h % 24)}h`;
}

/** The local wall-clock time of an ISO date, `10:41:37` (the ISO text itself when unparsable). */
export function formatClock(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toTimeString().slice(0, 8);
}
