import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listPids, readSmallSync } from '../../src/host/procs/proc-files.js';
import { ancestors, readCmdline, readStat } from '../../src/run/proc.js';
import { RUN_MARKER } from '../../src/run/run-scan.js';
import { records } from './runs.js';

// Every process a test started in one of its temporary homes, found and SIGKILLed before the home
// is removed, whatever the test did: a test that timed out mid-`up` leaves a foreground `up`, a
// detached supervisor and the run's fakes, all adopted by init once the folder is gone.
//
// A process counts as the test's own only on proof tied to the home, a folder mkdtemp made for this
// test alone:
// - it carries a run marker of the home (DYNAMO_DEV_RUN=<state dir>/runs/<id>, every process `up`
//   starts and whatever they fork, src/run/run-scan.ts), or
// - it was started with the home as DYNAMO_DEV_HOME (the CLI itself: a foreground `up`, the detached
//   supervisor, an `up` that has not written its record yet), or
// - a record of the home names it as a run's supervisor, with the recorded start ticks, and it runs
//   this checkout's CLI (an `up` given the home by --state-dir);
// and the process groups such a process leads (each process `up` starts leads its own: its members
// are its descendants, those forked after the look included). Never this process, its ancestors or
// its group, init, or a zombie. A test's fake records may name any pid: a recorded pid alone proves
// nothing, so teardown tests' processes stay theirs to stop (proc-trees.ts killStarted).

const ROOT = resolve(fileURLToPath(import.meta.url), '..', '..', '..');
const OUR_CLI = [join(ROOT, 'bin', 'dynamo-dev.js'), join(ROOT, 'dist', 'run', 'detached-entry.js')];

export interface HomeProcess {
  pid: number;
  startTicks: number;
  cmd: string;
  /** What proves it the test's own. */
  why: string;
  /** It leads its own process group (signalled as a group). */
  leadsGroup: boolean;
}

/** The spellings of a state dir a process may carry: as given (resolved) and its real path. */
function spellings(stateDir: string): string[] {
  const out = new Set([resolve(stateDir)]);
  try {
    out.add(realpathSync(stateDir));
  } catch {
    // not created (yet): only the given spelling
  }
  return [...out];
}

/** Pure: why an environment block (NUL-separated) ties its process to the state dir, or null. */
export function homeTie(environ: string, dirs: readonly string[]): string | null {
  for (const entry of environ.split('\0')) {
    const eq = entry.indexOf('=');
    const [key, value] = [entry.slice(0, eq), entry.slice(eq + 1)];
    if (key === RUN_MARKER && dirs.some((d) => value.startsWith(join(d, 'runs') + '/'))) return `run marker ${value}`;
    if (key === 'DYNAMO_DEV_HOME' && value !== '' && dirs.includes(resolve(value))) return `DYNAMO_DEV_HOME=${value}`;
  }
  return null;
}

/** Pids no cleanup may signal: init, this process and its ancestors; and our process group. */
function untouchable(): { pids: Set<number>; group: number | null } {
  return { pids: new Set([0, 1, process.pid, ...ancestors(process.pid)]), group: readStat(process.pid)?.pgid ?? null };
}

/** Every live process that is provably of this home (see above), found in one pass over /proc. */
export function homeProcesses(stateDir: string): HomeProcess[] {
  const dirs = spellings(stateDir);
  const never = untouchable();
  const found = new Map<number, HomeProcess>();
  const add = (pid: number, why: string) => {
    if (never.pids.has(pid) || found.has(pid)) return;
    const s = readStat(pid); // null for a zombie: it holds nothing and cannot be killed again
    if (!s) return;
    found.set(pid, { pid, startTicks: s.startTicks, cmd: readCmdline(pid), why, leadsGroup: s.pgid === pid && s.pgid !== never.group });
  };
  for (const pid of listPids()) {
    const env = readSmallSync(`/proc/${pid}/environ`);
    const why = env === null ? null : homeTie(env, dirs);
    if (why !== null) add(pid, why);
  }
  for (const rec of records(stateDir)) {
    const sup = rec.supervisor;
    if (!sup || readStat(sup.pid)?.startTicks !== sup.startTicks) continue;
    const argv = readSmallSync(`/proc/${sup.pid}/cmdline`)?.split('\0') ?? [];
    if (argv.some((a) => OUR_CLI.includes(a))) add(sup.pid, `supervisor of run ${rec.id}`);
  }
  return [...found.values()].sort((a, b) => a.pid - b.pid);
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * SIGKILLs every process of the home (its groups too) until a look finds none; returns what it
 * killed. Sync, so a cleanup that removes the folder right after may call it. Throws, naming them,
 * when some still live after `timeoutMs` (a process in uninterruptible sleep): a test must not
 * pass over a leak silently.
 */
export function killHomeProcesses(stateDir: string, timeoutMs = 5000): HomeProcess[] {
  const killed = new Map<number, HomeProcess>();
  const end = Date.now() + timeoutMs;
  for (;;) {
    const live = homeProcesses(stateDir);
    if (live.length === 0) return [...killed.values()];
    if (Date.now() > end) {
      throw new Error(`processes of ${stateDir} survive SIGKILL for ${timeoutMs} ms: ${live.map((p) => `${p.pid} ${p.cmd} (${p.why})`).join('; ')}`);
    }
    // The CLI first (a foreground `up` or supervisor would start the next process), then the rest.
    const order = [...live.filter((p) => p.why.startsWith('DYNAMO_DEV_HOME') || p.why.startsWith('supervisor')), ...live];
    for (const p of order) {
      if (readStat(p.pid)?.startTicks !== p.startTicks) continue; // gone, or its pid reused since the look
      for (const target of p.leadsGroup ? [-p.pid, p.pid] : [p.pid]) {
        try {
          process.kill(target, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      killed.set(p.pid, p);
    }
    pause(10); // a killed process leaves /proc (or turns zombie) within a scheduler tick; not an event we can await
  }
}
