import type { PortFact } from '../../host/types.js';
import { fail, pass, type Check } from '../types.js';

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
const DEFAULT_PORT: Record<string, number> = { 'frontend.httpPort': 8000, 'ports.system': 8081, 'ports.kvEvents': 20080, 'ports.nixlSideChannel': 20097 };

const check: Check = {
  id: 'ports.free',
  title: 'Ports of the plan are free',
  async run(facts) {
    const [ports, run] = await Promise.all([facts.ports(), facts.liveRun()]);
    const ours = new Set(run?.live ? run.pids : []);
    // A live run's own ports: held by one of its pids, or (holder unreadable) recorded for one of
    // its processes that is still alive. A port of a process that died is not the run's any more:
    // whoever holds it now is a stranger (another user's server, whose fds we cannot read).
    const runPorts = new Set(run?.live
      ? run.record.processes.filter((p) => p.pid !== null && ours.has(p.pid)).flatMap((p) => Object.values(p.ports))
      : []);
    const isOurs = (p: PortFact) => (p.holderPid !== null ? ours.has(p.holderPid) : runPorts.has(p.port));
    const evidence = { ports, runId: run?.live ? run.record.id : null };
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
    const blocked = ports.filter((p) => !p.free && !isOurs(p));
    if (blocked.length === 0) {
      const held = ports.filter((p) => !p.free).length;
      return pass(
        held
          ? `${ports.length - held} of ${ports.length} ports free, ${held} held by the live run ${run?.record.id}: ${ports.map((p) => p.port).join(', ')}`
          : `${ports.length} port${ports.length === 1 ? '' : 's'} free: ${ports.map((p) => p.port).join(', ')}`,
        evidence,
      );
    }
    const who = (p: PortFact, width = Infinity) =>
      p.holderPid !== null ? `pid ${p.holderPid}${p.holderCmd ? ` (${truncate(p.holderCmd, width)})` : ''}` : 'an unknown process (not readable as this user)';
    const details = blocked.map((p) => `port ${p.port} (${p.name}) is in use by ${who(p)}`);
    const holders = [...new Set(blocked.map((p) => p.holderPid).filter((x): x is number => x !== null))];
    const moves = [...new Map(blocked.map((p) => {
      const s = settingFor(p.name);
      // Worker ports are ranges counted from the recipe's first port: move the whole range.
      const key = s?.startsWith('ports.') ? (s.slice(6) as keyof typeof facts.recipe.ports) : null;
      const first = key ? facts.recipe.ports[key] + 100 : p.port + 1;
      return [s, s ? `--set ${s}=${first}` : null] as const;
    })).values()].filter(Boolean);
    const stop = holders.length
      ? `stop the holder (kill ${holders.join(' ')}, or \`dynamo-dev teardown\` if it is an earlier run)`
      : 'stop the process holding it (`ss -ltnp` names it), or `dynamo-dev teardown` if it is an earlier run';
    const f = blocked[0];
    return fail(
      `port ${f.port} (${f.name}) is in use by ${who(f, 60)}${blocked.length > 1 ? `, and ${blocked.length - 1} more port(s)` : ''}`,
      `${stop}, or move the port${moves.length ? `: ${moves.join(' ')}` : ''}`,
      details,
      evidence,
    );
  },
};

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 3)}...`;
}

export default check;
