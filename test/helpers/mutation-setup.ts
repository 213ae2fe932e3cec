import { readFileSync } from 'node:fs';
import { beforeEach } from 'vitest';

// Loaded only by vitest.mutate.config.ts (npm run mutate), never by npm test.

// 1. Tests that time the code itself. Stryker's instrumented code (a coverage counter and a mutant
// switch around every statement) is far slower in hot loops: "a long line arriving in small pieces
// is searched once" took 29.6 s instead of 71 ms (limit 2 s) in the initial run, and one failing
// test stops the whole mutation run. They are skipped here, and only here; npm test runs them.
const TIMED = [
  /a long line arriving in small pieces is searched once \(linear, not quadratic\)/,
  // doctor's runner: "concurrent, not in sequence" within 110 ms, and a timed-out check returns
  // within 500 ms; on a loaded machine the initial run missed the first (147 ms).
  /^starts all checks at once and returns them in declared order$/,
  /^reports a check that exceeds its time as fail and does not wait for it$/,
];
beforeEach((ctx) => {
  if (TIMED.some((re) => re.test(ctx.task.name))) ctx.skip();
});

// 2. A safety net for process signals. Under mutation, the guards of src/run/stop.ts are mutated
// too: with `t.pgid !== ownGroup` made `true`, the test "never signals our own process group"
// really sends SIGTERM to the group of the test runner, and that group is Stryker's own: the whole
// run dies (seen at 99% of a 30-minute run). So in the test process, process.kill refuses what no test may ever signal: pid 0 and -1 (our group,
// every process), init, this process and its ancestors, and their process groups. A refused call
// throws EPERM as the kernel would for a process we may not signal; the code under test reports the
// failed signal and the test's own assertions decide whether the mutant is caught.
//
// /proc/<pid>/stat is parsed here on purpose rather than with src/host/procs/parse-proc.ts: that parser is
// mutated during the run, and the net must not depend on code under test.

interface Stat {
  ppid: number;
  pgid: number;
}

function readStat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm may hold spaces and parentheses: the fields after it start past the LAST ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), pgid: Number(fields[2]) };
  } catch {
    return null;
  }
}

const protectedPids = new Set<number>([0, 1]);
const protectedGroups = new Set<number>([0, 1]);
for (let pid = process.pid, hops = 0; pid > 1 && hops < 64; hops++) {
  const st = readStat(pid);
  protectedPids.add(pid);
  if (!st) break;
  protectedGroups.add(st.pgid);
  pid = st.ppid;
}

/** Why a signal to `pid` is refused, or null when it may be sent. */
export function refusal(pid: number): string | null {
  if (!Number.isInteger(pid)) return null; // process.kill itself rejects it
  if (pid === -1) return 'every process';
  if (pid < 0 && protectedGroups.has(-pid)) return `the process group ${-pid} of the mutation run`;
  if (pid >= 0 && protectedPids.has(pid)) return pid === 0 ? 'our own process group' : `pid ${pid}, the mutation run or an ancestor`;
  return null;
}

const KEY = Symbol.for('dynamo-dev.mutation-safety');
const g = globalThis as { [KEY]?: true };
if (!g[KEY]) {
  g[KEY] = true;
  const realKill = process.kill.bind(process);
  process.kill = ((pid: number, signal?: string | number): true => {
    const why = refusal(pid);
    if (why !== null && signal !== 0) {
      throw Object.assign(new Error(`kill EPERM (mutation safety: refused ${String(signal ?? 'SIGTERM')} to ${why})`), {
        code: 'EPERM', errno: -1, syscall: 'kill',
      });
    }
    return realKill(pid, signal);
  }) as typeof process.kill;
}
