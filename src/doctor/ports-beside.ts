import type { RunView } from '../run/run-view.js';
import type { Reservation } from '../run/port-reservations.js';
import { basesOf, choosePortBases, formatPorts, portsByKind, withBases, SETTING, type PortBases, type PortKind } from '../plan/port-choice.js';
import type { Plan } from '../plan/types.js';
import type { Recipe } from '../recipe/schema.js';
import { portFree } from '../host/net/ports.js';

// `up --name`'s port choice beside live runs (commands/up.ts), shared with doctor so that
// `doctor --recipe R` checks the very ports `up R --name NAME` would take now, not R's nominal ones.

/** Who holds a port of a live run's plan: the run (its name when it has one) and the process. */
export interface LiveHolder { runId: string; run: string; process: string; pid: number | null }

export type PortsBeside =
  | {
    ok: true;
    /** The recipe with the chosen first ports (the same object when none moved). */
    recipe: Recipe;
    /** The ports the plan takes, by kind, after the move. */
    shifted: Record<PortKind, number[]>;
    /** The recipe's own ports that could not be kept: held by a live run (holder) or in use by something else (null). */
    moved: { port: number; holder: LiveHolder | null }[];
    /** up's line: "ports: http 24103, system 24104-24105 (the recipe's ... held by run X)". */
    line: string;
  }
  | { ok: false; message: string; fix: string };

/** Pure: every port the live runs' plans hold (and the starting runs' reserved), with the run and process holding it. */
export function livePorts(lives: readonly RunView[], reserved: readonly Reservation[] = []): Map<number, LiveHolder> {
  const held = new Map<number, LiveHolder>();
  for (const r of reserved) {
    for (const port of r.ports) held.set(port, { runId: r.runId, run: r.name ?? r.runId, process: 'starting', pid: r.pid });
  }
  for (const v of lives) {
    for (const p of v.record.processes) {
      for (const port of Object.values(p.ports)) held.set(port, { runId: v.record.id, run: v.record.name ?? v.record.id, process: p.name, pid: p.pid });
    }
  }
  return held;
}

/**
 * The first ports of each kind past those the live runs hold (every port of their plans) and those
 * something is bound to now, with the line that says which were chosen and why.
 */
export async function portsBeside(recipe: Recipe, plan: Plan, lives: readonly RunView[], o: { free?: (port: number) => Promise<boolean>; reserved?: readonly Reservation[] } = {}): Promise<PortsBeside> {
  const free = o.free ?? portFree;
  const held = livePorts(lives, o.reserved);
  const bases = basesOf(recipe);
  const used = portsByKind(plan);
  const busy = new Set<number>();
  // Each round binds the ports it chose; a busy one joins the taken and the choice runs again.
  for (let round = 0; round < 50; round++) {
    const c = choosePortBases(bases, used, (p) => held.has(p) || busy.has(p));
    if (!c.ok) {
      return {
        ok: false,
        message: `no free range for ${SETTING[c.kind]} from ${bases[c.kind]} up (live runs and other programs hold the ports)`,
        fix: `set another with --set ${SETTING[c.kind]}=PORT`,
      };
    }
    const shifted = shift(used, bases, c.bases);
    const all = Object.values(shifted).flat();
    const answers = await Promise.all(all.map((p) => free(p)));
    const newlyBusy = all.filter((_, i) => !answers[i]);
    if (newlyBusy.length > 0) {
      for (const p of newlyBusy) busy.add(p);
      continue;
    }
    const moved = Object.values(used).flat().filter((p) => held.has(p) || busy.has(p)).map((port) => ({ port, holder: held.get(port) ?? null }));
    const changed = (Object.keys(bases) as PortKind[]).some((k) => bases[k] !== c.bases[k]);
    return { ok: true, recipe: changed ? withBases(recipe, c.bases) : recipe, shifted, moved, line: `ports: ${formatShift(shifted, moved)}` };
  }
  return { ok: false, message: 'could not find free ports after 50 tries', fix: 'set them with --set frontend.httpPort=PORT --set ports.system=PORT' };
}

/** Pure: each kind's ports moved from the recipe's first port to the chosen one. */
function shift(used: Record<PortKind, number[]>, from: PortBases, to: PortBases): Record<PortKind, number[]> {
  return Object.fromEntries((Object.keys(used) as PortKind[]).map((k) => [k, used[k].map((p) => p - from[k] + to[k])])) as Record<PortKind, number[]>;
}

/** Pure: "http 24103, system 24104-24105 (the recipe's 24100, 24101 held by run X)". */
function formatShift(shifted: Record<PortKind, number[]>, moved: { port: number; holder: LiveHolder | null }[]): string {
  const runs = [...new Set(moved.map((m) => m.holder?.run).filter((r): r is string => Boolean(r)))];
  const why = moved.length === 0 ? 'the recipe\'s own, all free'
    : `the recipe's ${moved.slice(0, 6).map((m) => m.port).join(', ')}${moved.length > 6 ? ', ...' : ''} ${runs.map((r) => `held by run ${r}`).concat(moved.some((m) => m.holder === null) ? ['in use'] : []).join(', ')}`;
  return `${formatPorts(shifted)} (${why})`;
}
