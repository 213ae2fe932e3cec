import type { PortFact, ProcessInfo } from '../../host/types.js';
import { formatPorts, portsByKind } from '../../plan/port-choice.js';
import type { Plan } from '../../plan/types.js';
import { ownersOf, runLabel, type PidOwner } from '../run-share.js';
import { fail, pass, type BesideChoice, type Check, type RunView } from '../types.js';
import { DEFAULT_FRONTEND_PORT } from '../../defaults.js';

// A port already taken makes the frontend or a worker die at bind with "Address already in use"
// after the model has loaded, or (ZMQ KV-event / NIXL side-channel ports) silently talk to a
// stale process of an earlier run.

/** The recipe setting that moves a planned port: frontend.http -> frontend.httpPort, agg-0.system -> ports.system. */
export function settingFor(name: string): string | null {
  const key = name.slice(name.lastIndexOf('.') + 1);
  if (name.startsWith('frontend.') && key === 'http') return 'frontend.httpPort';
  if (key === 'system' || key === 'kvEvents' || key === 'nixlSideChannel') return `ports.${key}`;
  return null;
}

/** The recipe defaults, a known-good suggestion for a privileged port. */
const DEFAULT_PORT: Record<string, number> = { 'frontend.httpPort': DEFAULT_FRONTEND_PORT, 'ports.system': 8081, 'ports.kvEvents': 20080, 'ports.nixlSideChannel': 20097 };

/** Who holds a taken port, as the check judges it. */
type Holder =
  | { kind: 'own'; owner: PidOwner; pid: number | null }
  | { kind: 'live'; owner: PidOwner; pid: number | null }
  | { kind: 'stranger' };

const check: Check = {
  id: 'ports.free',
  title: 'Ports of the plan are free',
  async run(facts) {
    const [ports, run, lives] = await Promise.all([facts.ports(), facts.liveRun(), facts.liveRuns()]);
    const taken = ports.filter((p) => !p.free && !p.denied);
    // Only a taken port asks who holds it: the process list is shared with the other checks.
    const procs = taken.length > 0 && lives.length > 0 ? await facts.processes() : [];
    const holderOf = portHolders(taken, lives, procs, facts.planRunId);
    const beside = facts.beside;
    const evidence = {
      ports,
      runId: run?.live ? run.record.id : null,
      // Each taken port: the live run and process holding it, or a stranger.
      heldBy: taken.map((p) => {
        const h = holderOf(p);
        return { port: p.port, name: p.name, pid: p.holderPid, ...(h.kind === 'stranger' ? { run: null } : { run: h.owner.runId, process: h.owner.process, own: h.kind === 'own' }) };
      }),
      ...(beside ? { beside } : {}),
    };
    if (beside?.refused) {
      return fail(`\`${beside.command}\`${beside.withSets ? ' (with the same --set)' : ''} finds no ports beside ${beside.runs.join(', ')}: ${beside.refused.message}`, beside.refused.fix, [], evidence);
    }
    const denied = ports.filter((p) => p.denied);
    if (denied.length > 0) {
      const d = denied[0];
      const s = settingFor(d.name);
      return fail(
        `port ${d.port} (${d.name}) needs root: ports below 1024 are privileged and nothing listens there${denied.length > 1 ? `, and ${denied.length - 1} more port(s)` : ''}`,
        `use a port from 1024 up${s ? `, e.g. --set ${s}=${DEFAULT_PORT[s]}` : ''}`,
        denied.map((p) => `port ${p.port} (${p.name}): binding it is not permitted (EACCES) for this user`),
        evidence,
      );
    }
    const blocked = taken.filter((p) => holderOf(p).kind !== 'own');
    if (blocked.length === 0) return pass(passLine(ports, holderOf, beside, facts.plan), evidence);

    const who = (p: PortFact, width = Infinity): string => {
      const h = holderOf(p);
      if (h.kind === 'live') return `live ${h.owner.run} (${ownerText(h.owner, p.holderPid)})`;
      return p.holderPid !== null ? `pid ${p.holderPid}${p.holderCmd ? ` (${truncate(p.holderCmd, width)})` : ''}` : 'an unknown process (not readable as this user)';
    };
    const details = blocked.map((p) => `port ${p.port} (${p.name}) is ${holderOf(p).kind === 'live' ? 'held' : 'in use'} by ${who(p)}`);
    const strangers = blocked.filter((p) => holderOf(p).kind === 'stranger');
    const liveRefs = [...new Set(blocked.map((p) => holderOf(p)).flatMap((h) => (h.kind === 'live' ? [h.owner.ref] : [])))];
    const fixes: string[] = [];
    if (liveRefs.length > 0) {
      fixes.push(`start it beside ${liveRefs.length === 1 ? 'that run' : 'those runs'} with \`dynamo-dev up ${facts.recipe.name} --name NAME\` (up moves its ports past a live run's), or stop ${liveRefs.length === 1 ? 'it' : 'them'}: ${liveRefs.map((r) => `\`dynamo-dev teardown --run ${r}\``).join(', ')}`);
    }
    if (strangers.length > 0) {
      const holders = [...new Set(strangers.map((p) => p.holderPid).filter((x): x is number => x !== null))];
      const moves = [...new Map(strangers.map((p) => {
        const s = settingFor(p.name);
        // Worker ports are ranges counted from the recipe's first port: move the whole range.
        const key = s?.startsWith('ports.') ? (s.slice(6) as keyof typeof facts.recipe.ports) : null;
        return [s, s ? `--set ${s}=${movedPort(s, key ? facts.recipe.ports[key] : p.port, key ? 100 : 1, ports)}` : null] as const;
      })).values()].filter(Boolean);
      const stop = holders.length
        ? `stop the holder (kill ${holders.join(' ')}, or \`dynamo-dev teardown\` if it is an earlier run)`
        : 'stop the process holding it (`ss -ltnp` names it), or `dynamo-dev teardown` if it is an earlier run';
      fixes.push(`${stop}, or move the port${moves.length ? `: ${moves.join(' ')}` : ''}`);
    }
    const f = blocked[0];
    return fail(
      `port ${f.port} (${f.name}) is ${holderOf(f).kind === 'live' ? 'held' : 'in use'} by ${who(f, 60)}${blocked.length > 1 ? `, and ${blocked.length - 1} more port(s)` : ''}`,
      fixes.join('; '),
      details,
      evidence,
    );
  },
};

/**
 * Pure: where to move setting `s` (now at `base`): `step` past it, and on, until none of the ports
 * it moves lands on another planned port (the frontend moved onto the first worker's system port
 * was a fix that failed the same check).
 */
export function movedPort(s: string, base: number, step: number, ports: readonly PortFact[]): number {
  const offsets = ports.filter((p) => settingFor(p.name) === s).map((p) => p.port - base);
  const others = new Set(ports.filter((p) => settingFor(p.name) !== s).map((p) => p.port));
  let to = base + step;
  while (to + Math.max(0, ...offsets) + step <= 65_535 && offsets.some((o) => others.has(to + o))) to += step;
  return to;
}

/**
 * Pure: who holds each taken port. A live run's own: held by one of its pids, or (holder
 * unreadable) recorded for one of its processes that is still alive. A port of a process that
 * died is not the run's any more: whoever holds it now is a stranger (another user's server,
 * whose fds we cannot read). Held by the run whose plan is judged (`planRunId`): its own; by
 * another live run of ours: that run's, named.
 */
export function portHolders(taken: readonly PortFact[], lives: readonly RunView[], procs: readonly ProcessInfo[], planRunId: string | null): (p: PortFact) => Holder {
  const owners = ownersOf(taken.flatMap((p) => (p.holderPid !== null ? [p.holderPid] : [])), lives, procs);
  const recorded = new Map<number, PidOwner & { pid: number }>();
  for (const v of lives) {
    const alive = new Set(v.pids);
    for (const p of v.record.processes) {
      if (p.pid === null || !alive.has(p.pid)) continue;
      for (const port of Object.values(p.ports)) recorded.set(port, { runId: v.record.id, run: runLabel(v), ref: v.record.name ?? v.record.id, process: p.name, supervisor: false, pid: p.pid });
    }
  }
  return (p) => {
    const owner = p.holderPid !== null ? owners.get(p.holderPid) : recorded.get(p.port);
    if (!owner) return { kind: 'stranger' };
    const pid = p.holderPid ?? recorded.get(p.port)?.pid ?? null;
    return { kind: owner.runId === planRunId ? 'own' : 'live', owner, pid };
  };
}

/** "frontend, pid 13302" / "its supervisor, pid 13290". */
function ownerText(o: PidOwner, pid: number | null): string {
  const what = o.supervisor ? 'its supervisor' : o.process ?? 'a process of it';
  return pid !== null ? `${what}, pid ${pid}` : what;
}

/** Pure: the pass line: which ports are free and which the judged run itself holds; beside live runs, the ports up --name takes and why. */
function passLine(ports: readonly PortFact[], holderOf: (p: PortFact) => Holder, beside: BesideChoice | null, plan: Plan): string {
  const free = ports.filter((p) => p.free);
  const own = ports.filter((p) => !p.free);
  if (beside) {
    const byRun = new Map<string, string[]>();
    const inUse: number[] = [];
    for (const m of beside.moved) {
      if (!m.holder) inUse.push(m.port);
      else byRun.set(m.holder.run, [...(byRun.get(m.holder.run) ?? []), `${m.port} ${m.holder.process}${m.holder.pid !== null ? ` pid ${m.holder.pid}` : ''}`]);
    }
    const why = [
      ...[...byRun].map(([r, xs]) => `${xs.join(', ')} held by run ${r}`),
      ...(inUse.length > 0 ? [`${inUse.join(', ')} in use by another program`] : []),
    ];
    const head = `\`${beside.command}\`${beside.withSets ? ' (with the same --set)' : ''} would take ${formatPorts(portsByKind(plan))}, all free`;
    const refusal = 'without --name, up refuses while a run is live';
    return why.length > 0
      ? `${head}; the recipe's own ports are taken: ${why.join('; ')} (${refusal})`
      : `${head}: the recipe's own, beside ${beside.runs.join(', ')} (${refusal})`;
  }
  const list = (xs: readonly PortFact[]) => xs.map((p) => `${p.port} ${p.name}`).join(', ');
  if (own.length === 0) return `${ports.length} port${ports.length === 1 ? '' : 's'} free: ${ports.map((p) => p.port).join(', ')}`;
  const h = holderOf(own[0]);
  const runText = h.kind === 'stranger' ? 'the live run' : h.owner.run;
  const ownText = own.map((p) => {
    const x = holderOf(p);
    return `${p.port} ${p.name}${x.kind !== 'stranger' && x.pid !== null ? ` pid ${x.pid}` : ''}`;
  }).join(', ');
  return free.length === 0
    ? `all ${own.length} held by ${runText} itself: ${ownText}`
    : `${own.length} held by ${runText} itself (${ownText}); ${free.length} free: ${list(free)}`;
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 3)}...`;
}

export default check;
