import type { ProcessInfo } from '../host/types.js';
import type { RunView } from './types.js';

// What of the machine belongs to which live run (`up --name` runs side by side): doctor counts and
// names a live run's processes as status does (one per planned process), so its process count
// agrees with status, and says what else runs under them (an engine core under its worker) and
// which supervisor owns them. Pure: the run views and one process list come in.

/** A run as the user names it: "run ID (NAME)", as status heads it. */
export const runLabel = (v: Pick<RunView, 'record'>): string => `run ${v.record.id}${v.record.name ? ` (${v.record.name})` : ''}`;

/** The live run and planned process a pid belongs to. */
export interface PidOwner {
  runId: string;
  /** runLabel of the run. */
  run: string;
  /** The name --run takes: the run's name, else its id. */
  ref: string;
  /** The planned process (frontend, agg-0) it is, or runs under; null: the supervisor or a process of no planned one. */
  process: string | null;
  supervisor: boolean;
}

/**
 * Pure: the live run (and its process) each pid of `pids` belongs to: a planned process's leader,
 * a member of its group or a descendant of it, the run's supervisor, or another of the run's
 * pids (found by its marker). Pids of no live run are absent.
 */
export function ownersOf(pids: readonly number[], lives: readonly RunView[], procs: readonly ProcessInfo[]): Map<number, PidOwner> {
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const out = new Map<number, PidOwner>();
  for (const pid of pids) {
    for (const v of lives) {
      const own = new Set([...v.pids, ...(v.lost ?? []).flatMap((x) => x.leftPids)]);
      if (!own.has(pid)) continue;
      const base = { runId: v.record.id, run: runLabel(v), ref: v.record.name ?? v.record.id };
      if (v.record.supervisor?.pid === pid) {
        out.set(pid, { ...base, process: null, supervisor: true });
        break;
      }
      out.set(pid, { ...base, process: plannedProcessOf(pid, v, byPid), supervisor: false });
      break;
    }
  }
  return out;
}

/** The planned process a pid is, leads the group of, or descends from. */
function plannedProcessOf(pid: number, v: RunView, byPid: ReadonlyMap<number, ProcessInfo>): string | null {
  const planned = v.record.processes.filter((p) => p.pid !== null);
  const direct = planned.find((p) => p.pid === pid);
  if (direct) return direct.name;
  const info = byPid.get(pid);
  const inGroup = info?.pgid != null ? planned.find((p) => (p.pgid ?? p.pid) === info.pgid) : undefined;
  if (inGroup) return inGroup.name;
  const seen = new Set<number>();
  for (let cur = info; cur && !seen.has(cur.pid); cur = byPid.get(cur.ppid)) {
    seen.add(cur.pid);
    const hit = planned.find((p) => p.pid === cur!.pid);
    if (hit) return hit.name;
  }
  return null;
}

/** One live run's share of the machine, counted as status counts it. */
export interface RunShare {
  runId: string;
  name: string | null;
  /** The planned processes alive now, each by its leader's pid: status's rows with ALIVE yes. */
  processes: { name: string; pid: number }[];
  /** The planned processes not alive (status's rows with ALIVE no: a lost worker). */
  gone: string[];
  /** Other live pids of the run (an engine core under its worker, a helper of a group), by the process they run under. */
  under: { pid: number; process: string | null; cmd: string | null }[];
  /** The supervisor, when alive: the foreground `up` or the detached one. */
  supervisor: { pid: number; detached: boolean } | null;
}

/** Pure: what a live run owns now, as status lists it (see RunShare). */
export function runShare(v: RunView, procs: readonly ProcessInfo[]): RunShare {
  const own = new Set(v.pids);
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const processes = v.record.processes.filter((p) => p.pid !== null && own.has(p.pid)).map((p) => ({ name: p.name, pid: p.pid! }));
  const leaders = new Set(processes.map((p) => p.pid));
  const sup = v.record.supervisor && own.has(v.record.supervisor.pid) ? { pid: v.record.supervisor.pid, detached: v.record.supervisor.detached } : null;
  const under = v.pids
    .filter((pid) => !leaders.has(pid) && pid !== sup?.pid)
    .map((pid) => ({ pid, process: plannedProcessOf(pid, v, byPid), cmd: byPid.get(pid)?.cmd ?? null }));
  const gone = v.record.processes.filter((p) => !processes.some((x) => x.name === p.name)).map((p) => p.name);
  return { runId: v.record.id, name: v.record.name ?? null, processes, gone, under, supervisor: sup };
}

/**
 * Pure: "run ID (b): 2 processes, as status lists them (frontend pid 13302, agg-0 pid 13314), and
 * under them agg-0's pid 13385 (VLLM::EngineCore), supervised by pid 13290 (the detached up)".
 */
export function describeShare(s: RunShare): string {
  const n = s.processes.length;
  const count = s.gone.length > 0 ? `${n} of ${n + s.gone.length} processes alive` : `${n} process${n === 1 ? '' : 'es'}`;
  const gone = s.gone.length > 0 ? `; ${s.gone.join(', ')} gone` : '';
  const head = `run ${s.runId}${s.name ? ` (${s.name})` : ''}: ${count}, as status lists them (${s.processes.map((p) => `${p.name} pid ${p.pid}`).join(', ') || 'none alive'}${gone})`;
  const under = s.under.length === 0 ? ''
    : `, and under them ${s.under.map((u) => `${u.process ? `${u.process}'s` : 'the run\'s'} pid ${u.pid}${u.cmd ? ` (${shortCmd(u.cmd)})` : ''}`).join(', ')}`;
  const sup = s.supervisor ? `, supervised by pid ${s.supervisor.pid} (${s.supervisor.detached ? 'the detached up' : 'up in its terminal'})` : ', no supervisor alive';
  return `${head}${under}${sup}`;
}

/** An engine core's title (VLLM::EngineCore) or the program's name: enough to tell what it is. */
function shortCmd(cmd: string): string {
  const first = cmd.split(/\s+/)[0] ?? cmd;
  return first.includes('::') ? first : first.slice(first.lastIndexOf('/') + 1);
}
