import { readFileSync, realpathSync, statSync } from 'node:fs';
import { runLiveness, type RunLiveness } from './liveness.js';
import { runDir } from './paths.js';
import { readStat, scanFor, type ProcStat } from './proc.js';
import { eachPid, listPids } from '../host/procs/proc-files.js';
import type { RunRecord } from './types.js';

// What of the recorded runs is alive: one look at /proc per command, shared by every record
// (scanFor: in proportion to what the records name).
//
// Records can miss processes: `up` SIGKILLed between a spawn and its write, a helper that
// double-forked out of its group. So every child `up` starts carries the run's marker in its
// environment (inherited by everything it forks), and the look finds them by it. Only runs that
// may still be live are searched (a run recorded stopped or failed was verified empty, markers
// included, when it was stopped), and only processes of our own uid, started since the oldest of
// those runs and not already known, have their environment read. A record from another boot names
// nothing alive: its pids and start ticks mean nothing now.

/** The environment variable every process of a run inherits; its value is the run's directory. */
export const RUN_MARKER = 'DYNAMO_DEV_RUN';

/** The marker value of a run: its directory under the real path of the state dir (however it was spelt). */
export function markerFor(stateDir: string, runId: string): string {
  let real = stateDir;
  try {
    real = realpathSync(stateDir);
  } catch {
    // not there yet: the spelling given
  }
  return runDir(real, runId);
}

/** This boot's id (the kernel's random boot_id); null where there is none. */
export function readBootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** Pure: the run marker's value in a NUL-separated environment block, or null. */
export function markerIn(environ: string): string | null {
  const key = `${RUN_MARKER}=`;
  let at = environ.startsWith(key) ? 0 : environ.indexOf(`\0${key}`);
  if (at < 0) return null;
  if (at > 0) at += 1;
  const end = environ.indexOf('\0', at);
  return environ.slice(at + key.length, end < 0 ? undefined : end) || null;
}

/**
 * Pure: the start ticks from which a run's marked processes may have started: its supervisor's,
 * or earlier, the `up` that probed the interpreter with the marker before the supervisor started.
 */
export function markedSince(rec: RunRecord): number | null {
  // Stryker disable next-line OptionalChaining: every record has a supervisor (the schema requires it)
  const s = rec.supervisor?.startTicks ?? null;
  const m = rec.supervisor?.markedSince;
  return typeof m === 'number' && Number.isInteger(m) && m >= 0 && (s === null || m < s) ? m : s;
}

/** Pure: a record from another boot (both boot ids known and different) has nothing alive. */
export const fromOtherBoot = (rec: RunRecord, bootId: string | null): boolean =>
  typeof rec.bootId === 'string' && bootId !== null && rec.bootId !== bootId;

export interface RunsScan {
  scan: ProcStat[];
  bootId: string | null;
  /** pid -> run directory, for processes carrying the marker of one of the runs examined. */
  marks: Map<number, string>;
  /** Whether a live pid is ours (our uid): a run's processes all run as the user who started it. */
  ours(pid: number): boolean;
}

export interface MarkerReader {
  /** Owner uid of a live pid (null: gone or unknown). */
  uidOf(pid: number): number | null;
  /** Its environment block (null: gone or unreadable). */
  environ(pid: number): string | null;
}

export const realMarkerReader: MarkerReader = {
  uidOf(pid) {
    try {
      return statSync(`/proc/${pid}`).uid;
    } catch {
      return null;
    }
  },
  environ(pid) {
    try {
      return readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      return null;
    }
  },
};

export interface MarkedQuery {
  uid: number | null;
  minTicks: number;
  known: ReadonlySet<number>;
  wanted: ReadonlySet<string>;
  selfPid: number;
}

/** Pure given the reader: the marker of one pid when it is a candidate that carries a wanted one. */
function markOf(pid: number, o: MarkedQuery, reader: MarkerReader, ticksOf: (pid: number) => number | null): string | null {
  if (pid <= 1 || o.known.has(pid) || pid === o.selfPid) return null;
  // Start time first: it usually comes free with a scan, and most processes of a machine are older
  // than the run (a uid check is a stat of /proc/PID each).
  const ticks = ticksOf(pid);
  if (ticks === null || ticks < o.minTicks) return null;
  if (reader.uidOf(pid) !== o.uid) return null;
  const env = reader.environ(pid);
  const mark = env === null ? null : markerIn(env);
  return mark !== null && o.wanted.has(mark) ? mark : null;
}

/**
 * Pure given the reader: marked processes among the candidates of a scan. A candidate is of our
 * uid, not known already, and started no earlier than `minTicks`.
 */
export function findMarked(scan: readonly ProcStat[], o: MarkedQuery, reader: MarkerReader = realMarkerReader): Map<number, string> {
  const out = new Map<number, string>();
  if (o.uid === null || o.wanted.size === 0) return out;
  const ticks = new Map(scan.map((s) => [s.pid, s.startTicks]));
  for (const s of scan) {
    const mark = markOf(s.pid, o, reader, (pid) => ticks.get(pid) ?? null);
    if (mark !== null) out.set(s.pid, mark);
  }
  return out;
}

/**
 * findMarked over every pid /proc lists, in slices that never hold the event loop. Start times come
 * from `scan` where it has the pid (a full scan has them all), else from /proc/PID/stat.
 */
async function findMarkedLive(o: MarkedQuery, reader: MarkerReader, scan: readonly ProcStat[] = []): Promise<Map<number, string>> {
  if (o.uid === null || o.wanted.size === 0) return new Map();
  const known = new Map(scan.map((s) => [s.pid, s.startTicks]));
  const hits = await eachPid(listPids(), (pid) => {
    const mark = markOf(pid, o, reader, (p) => known.get(p) ?? readStat(p)?.startTicks ?? null);
    return mark === null ? null : ([pid, mark] as const);
  });
  return new Map(hits);
}

/**
 * Live processes of ours carrying this marker, started no earlier than `minTicks` (the supervisor
 * checks with it that its stop left nothing of the run behind).
 */
export async function markedProcesses(marker: string, minTicks: number, reader: MarkerReader = realMarkerReader): Promise<ProcStat[]> {
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  const marks = await findMarkedLive({ uid, minTicks, known: new Set(), wanted: new Set([marker]), selfPid: process.pid }, reader);
  return [...marks.keys()].map(readStat).filter((s): s is ProcStat => s !== null);
}

/** The pids and process groups records name (what scanFor must judge). */
function recordedIds(recs: readonly RunRecord[]): { pids: number[]; groups: number[] } {
  const pids: number[] = [];
  const groups: number[] = [];
  for (const rec of recs) {
    // Stryker disable next-line OptionalChaining: equivalent: every record has a supervisor (RunRecord and the run.json schema require it)
    if (rec.supervisor?.pid) pids.push(rec.supervisor.pid);
    for (const p of rec.processes) {
      if (p.pid !== null) {
        pids.push(p.pid);
        groups.push(p.pgid ?? p.pid);
      }
      // Stryker disable next-line ArrayDeclaration: equivalent: descendants is always a list (RunRecord; the schema defaults it to [])
      for (const d of p.descendants ?? []) pids.push(d.pid);
    }
    for (const s of rec.survivors ?? []) pids.push(s.pid);
  }
  return { pids, groups };
}

/**
 * A run recorded in a state that may still have live processes it does not name. An ended run's
 * survivors of its stop (RunRecord.survivors) are named, pid and start ticks: no marker search for them.
 */
const mayLive = (rec: RunRecord) => rec.state !== 'stopped' && rec.state !== 'failed';

/** One look at /proc for these records: the processes they name, the boot id and the marked processes. */
export async function scanRuns(stateDir: string, recs: readonly RunRecord[], reader: MarkerReader = realMarkerReader): Promise<RunsScan> {
  const bootId = readBootId();
  const current = recs.filter((r) => !fromOtherBoot(r, bootId));
  const { pids, groups } = recordedIds(current);
  let scan = await scanFor(pids, groups);
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  const owners = new Map<number, boolean>();
  const ours = (pid: number) => {
    if (uid === null) return true;
    let ok = owners.get(pid);
    if (ok === undefined) owners.set(pid, (ok = reader.uidOf(pid) === uid));
    return ok;
  };
  const searched = current.filter(mayLive);
  // Known already: every pid some record accounts for (no need to read their environment).
  const known = new Set<number>(searched.flatMap((r) => runLiveness(r, scan).pids));
  // Every process of a run started after its supervisor did.
  // Stryker disable next-line OptionalChaining: equivalent: every record has a supervisor (RunRecord and the run.json schema require it)
  const minTicks = Math.min(...searched.map((r) => markedSince(r) ?? 0));
  const marks = await findMarkedLive({
    uid,
    minTicks: Number.isFinite(minTicks) ? minTicks : 0,
    known,
    wanted: new Set(searched.map((r) => markerFor(stateDir, r.id))),
    selfPid: process.pid,
  }, reader, scan);
  // The marked processes join the scan (a partial scan may not hold them).
  const have = new Set(scan.map((s) => s.pid));
  const extra = [...marks.keys()].filter((pid) => !have.has(pid)).map(readStat).filter((s): s is ProcStat => s !== null);
  if (extra.length > 0) scan = [...scan, ...extra];
  return { scan, bootId, marks, ours };
}

/**
 * The liveness of one record in a RunsScan: nothing alive for a record of another boot; marked
 * processes added; and only processes of our uid count (a record naming another user's process
 * names a stranger: every process of a run runs as the user who started it).
 */
export function livenessIn(stateDir: string, rec: RunRecord, rs: RunsScan): RunLiveness {
  if (fromOtherBoot(rec, rs.bootId)) return runLiveness(rec, []);
  const dir = markerFor(stateDir, rec.id);
  const marked = [...rs.marks].filter(([, d]) => d === dir).map(([pid]) => pid);
  const l = runLiveness(rec, rs.scan, marked);
  // Stryker disable next-line OptionalChaining,UnaryOperator: equivalent: every record has a supervisor, and a live one is in l.pids already; a process at pid +1 (init) matters to no liveness here
  const foreign = new Set([...l.pids, rec.supervisor?.pid ?? -1].filter((pid) => rs.scan.some((s) => s.pid === pid) && !rs.ours(pid)));
  if (foreign.size === 0) return l;
  return runLiveness(rec, rs.scan.filter((s) => !foreign.has(s.pid)), marked);
}
