import type { Recipe } from '../recipe/schema.js';
import type { Plan } from './types.js';
import { MAX_SYSTEM_PORT } from './build.js';
import { fetchRefuses } from './fetch-bad-ports.js';

// `up --name`: a second run beside a live one takes ports of its own. Each kind of port is a
// range counted from one recipe setting (frontend.httpPort; ports.system, ports.kvEvents,
// ports.nixlSideChannel: one per worker from the first); the range moves up as a whole, past the
// ports live runs hold, those something else is bound to and those fetch refuses (for the ports
// asked over HTTP), so the plan is the recipe's with other first ports, and says so. Pure: what
// is taken comes in as a predicate.

export type PortKind = 'http' | 'system' | 'kvEvents' | 'nixlSideChannel';
export type PortBases = Record<PortKind, number>;

const KINDS: PortKind[] = ['http', 'system', 'kvEvents', 'nixlSideChannel'];
const LIMIT: Record<PortKind, number> = { http: 65535, system: MAX_SYSTEM_PORT, kvEvents: 65535, nixlSideChannel: 65535 };
/** The recipe setting of each kind, as --set names it. */
export const SETTING: Record<PortKind, string> = {
  http: 'frontend.httpPort', system: 'ports.system', kvEvents: 'ports.kvEvents', nixlSideChannel: 'ports.nixlSideChannel',
};

export const basesOf = (r: Recipe): PortBases => ({
  http: r.frontend.httpPort, system: r.ports.system, kvEvents: r.ports.kvEvents, nixlSideChannel: r.ports.nixlSideChannel,
});

/** Pure: the recipe with these first ports. */
export function withBases(r: Recipe, b: PortBases): Recipe {
  return { ...r, frontend: { ...r.frontend, httpPort: b.http }, ports: { ...r.ports, system: b.system, kvEvents: b.kvEvents, nixlSideChannel: b.nixlSideChannel } };
}

/** Pure: the ports a plan uses, by kind (the frontend's `http`; each worker's). */
export function portsByKind(plan: Plan): Record<PortKind, number[]> {
  const out: Record<PortKind, number[]> = { http: [], system: [], kvEvents: [], nixlSideChannel: [] };
  for (const p of plan.processes) {
    for (const [k, port] of Object.entries(p.ports)) if ((KINDS as string[]).includes(k)) out[k as PortKind].push(port);
  }
  return out;
}

/** Below this, ports need root (and belong to system services). */
const LOWEST = 1024;

/**
 * Pure: the lowest first port of each kind at or above the recipe's whose whole range avoids
 * `taken` and the other kinds' chosen ranges (none up to the kind's limit: the highest below the
 * recipe's); not ok (with the kind) when no range fits anywhere.
 */
export function choosePortBases(bases: PortBases, used: Record<PortKind, number[]>, taken: (port: number) => boolean): { ok: true; bases: PortBases } | { ok: false; kind: PortKind } {
  const chosen = new Set<number>();
  const out = { ...bases };
  for (const k of KINDS) {
    const offsets = used[k].map((p) => p - bases[k]);
    if (offsets.length === 0) continue;
    const top = Math.max(...offsets);
    // Readiness asks the frontend and the workers' system ports over fetch, which refuses some ports.
    const refused = (port: number) => (k === 'http' || k === 'system') && fetchRefuses(port);
    const fits = (b: number) => !offsets.some((o) => taken(b + o) || chosen.has(b + o) || refused(b + o));
    let found: number | null = null;
    for (let b = bases[k]; found === null && b + top <= LIMIT[k]; b++) if (fits(b)) found = b;
    // Nothing free up to the limit (system ports stop at 32767): the nearest free range below.
    for (let b = bases[k] - 1; found === null && b >= LOWEST; b--) if (fits(b)) found = b;
    if (found === null) return { ok: false, kind: k };
    for (const o of offsets) chosen.add(found + o);
    out[k] = found;
  }
  return { ok: true, bases: out };
}

/** Pure: "http 8001, system 8083-8084, kvEvents 20082-20083" (consecutive ports as a range). */
export function formatPorts(used: Record<PortKind, number[]>): string {
  return KINDS.filter((k) => used[k].length > 0).map((k) => `${k} ${ranges(used[k])}`).join(', ');
}

function ranges(ports: number[]): string {
  const s = [...ports].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < s.length;) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j] + 1) j++;
    out.push(j > i ? `${s[i]}-${s[j]}` : `${s[i]}`);
    i = j + 1;
  }
  return out.join(', ');
}
