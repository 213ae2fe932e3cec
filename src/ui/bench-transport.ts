import type { BenchVariant } from '../bench/result.js';
import { visibleLength, wrapWords } from './fit.js';

const fit = (line: string, width: number | null, indent: string): string[] => (width === null || visibleLength(line) <= width ? [line] : wrapWords(line, width, indent));

// The KV transfer lane of each disaggregated variant (its preflight's NIXL probe), under the counts:
// a variant whose KV moved over TCP is flagged there, before any number is read, since its numbers
// measure the socket copy as much as disaggregation.

export function renderTransport(rows: { label: string; variant: BenchVariant }[], width: number | null): string[] {
  const withLane = rows.filter((r) => r.variant.transport);
  if (withLane.length === 0) return [];
  const out = ['KV transfer (the NIXL probe of each disaggregated variant\'s preflight)'];
  for (const { label, variant } of withLane) {
    const t = variant.transport!;
    const cost = t.msPerMb !== null && t.msPerMb !== undefined ? `, ${t.msPerMb} ms/MB` : '';
    const text = t.tcp
      ? `! ${label}: KV over TCP (${t.lane}${cost}): its numbers measure TCP, not a disaggregated setup anyone wants; unset UCX_TLS`
      : t.lane
        ? `${label}: ${t.lane}${cost}${t.ucxVersion ? `, UCX ${t.ucxVersion}` : ''}`
        : `${t.status === 'fail' ? '✗' : '!'} ${label}: ${t.summary}`;
    out.push(...fit(`  ${text}`, width, '      '));
  }
  return out;
}
