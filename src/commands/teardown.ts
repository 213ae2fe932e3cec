import { join } from 'node:path';
import type { CommandContext } from './context.js';
import { runDir } from '../run/paths.js';
import { assertProcIsOurs } from '../run/proc.js';
import { teardown as stopRuns, type TeardownResult } from '../run/teardown.js';
import { fitCommand, fitLines, formatRunPlan, formatStopLine, formatVerdict } from '../ui/teardown-report.js';
import { truncateWords } from '../ui/fit.js';
import { DEFAULT_GRACE_S } from '../defaults.js';

export interface TeardownOptions {
  run?: string;
  grace?: number;
  orphans?: boolean;
  json?: boolean;
}

/** `teardown` / `down`: exit 0 when nothing of the runs (and, with --orphans, no leftover) remains, else 1. */
export default async function teardown(ctx: CommandContext, opts: TeardownOptions = {}): Promise<number> {
  // Every pid it signals is read from /proc: in another pid namespace's /proc they are strangers.
  assertProcIsOurs();
  const t0 = performance.now();
  const graceMs = Math.round((opts.grace ?? DEFAULT_GRACE_S) * 1000);
  const human = !ctx.json;
  const width = 12;
  const logs = new Map<string, string>();
  // On a terminal, one line below the results counts down to SIGKILL for what is still stopping.
  const tty = human && Boolean((ctx.stdout as NodeJS.WriteStream).isTTY);
  // Once: every line wraps (and the countdown fits) to this; piped, nothing wraps.
  const columns = tty ? (ctx.stdout as NodeJS.WriteStream).columns || 80 : Infinity;
  const waiting = new Map<string, { names: string[]; killAt: number }>();
  let statusShown = false;
  const clearStatus = () => {
    if (statusShown) ctx.stdout.write('\r\u001b[K');
    statusShown = false;
  };
  const drawStatus = () => {
    clearStatus();
    const now = Date.now();
    const parts = [...waiting.values()].filter((w) => w.names.length > 0)
      .map((w) => `${w.names.join(', ')}: SIGKILL in ${Math.max(0, Math.ceil((w.killAt - now) / 1000))}s`);
    if (parts.length === 0) return;
    ctx.stdout.write(truncateWords(`  waiting for ${parts.join('; ')}`, columns - 1));
    statusShown = true;
  };
  const ticker = tty ? setInterval(drawStatus, 1000) : null;
  const out = await stopRuns({
    stateDir: ctx.stateDir,
    runId: opts.run,
    graceMs,
    orphans: Boolean(opts.orphans),
    onPlan: ({ runs, notRunning, unreadable }) => {
      if (!human) return;
      for (const v of notRunning) ctx.stdout.write(`${fitLines(`run ${v.record.id} is not running (${v.status}); nothing to stop`, columns, '  ')}\n`);
      if (runs.length === 0 && notRunning.length === 0 && unreadable.length === 0) ctx.stdout.write(`${fitLines(`no live runs in ${ctx.stateDir}`, columns, '  ')}\n`);
      for (const v of runs) for (const p of v.record.processes) logs.set(`${v.record.id}/${p.name}`, p.log);
      for (const v of runs) ctx.stdout.write(`${formatRunPlan(v, opts.grace ?? DEFAULT_GRACE_S, columns)}\n`);
      if (opts.orphans) ctx.stdout.write(`then: leftover engine processes of this user outside any live run\n`);
    },
    onProgress: (r: TeardownResult) => {
      if (!human) return;
      clearStatus();
      ctx.stdout.write(formatStopLine(r, width, r.run ? logs.get(`${r.run}/${r.name}`) : undefined, columns));
      if (tty) drawStatus();
    },
    onState: (run, s) => {
      if (!tty) return;
      waiting.set(run, { names: s.targets.filter((t) => t.phase === 'terminating').map((t) => t.name), killAt: Date.now() + s.killInMs });
      drawStatus();
    },
  });
  if (ticker) clearInterval(ticker);
  clearStatus();
  const ms = performance.now() - t0;
  for (const w of out.warnings) ctx.stderr.write(`dynamo-dev: warning: ${w}\n`);
  if (ctx.json) ctx.stdout.write(teardownJson(out));
  else {
    if (out.otherRuns?.length) await sayOtherRuns(ctx, out.otherRuns, columns);
    if (opts.orphans && out.orphans === 0) ctx.stdout.write('no leftover engine processes\n');
    ctx.stdout.write(formatVerdict(out, ms, out.runs.map((id) => join(runDir(ctx.stateDir, id), 'logs')), columns));
  }
  return out.remaining.length === 0 ? 0 : 1;
}

type Outcome = Awaited<ReturnType<typeof stopRuns>>;

/** --json: one document. */
function teardownJson(out: Outcome): string {
  return `${JSON.stringify({
    stopped: out.stopped.map((r) => ({ name: r.name, pid: r.pid, signal: r.signal, ms: r.ms, run: r.run, ...(r.note ? { note: r.note } : {}), ...(r.by ? { by: r.by } : {}) })),
    remaining: out.remaining,
    runs: out.runs,
    orphans: out.orphans,
    ...(out.otherRuns ? { otherRuns: out.otherRuns.map((r) => ({ pid: r.pid, name: r.name, run: r.runId, stateDir: r.stateDir })) } : {}),
    ...(out.warnings.length ? { warnings: out.warnings } : {}),
    ...(out.unreadable?.length ? { unreadable: out.unreadable } : {}),
  }, null, 2)}\n`;
}

/** Processes of other live runs, left alone: one block per run, its status command once on a line of its own (to paste). */
async function sayOtherRuns(ctx: CommandContext, otherRuns: NonNullable<Outcome['otherRuns']>, columns: number): Promise<void> {
  const { groupByRun, statusCommandFor } = await import('../run/other-runs.js');
  for (const procs of groupByRun(otherRuns)) {
    const [r] = procs;
    const n = procs.length === 1 ? '1 process' : `${procs.length} processes`;
    ctx.stdout.write(`${fitLines(`  left alone: ${n} of live run ${r.runId} (state dir ${r.stateDir}), not leftovers:`, columns, '    ')}\n`);
    ctx.stdout.write(`${fitLines(`    ${procs.map((p) => `pid ${p.pid} ${p.name}`).join(', ')}`, columns, '    ')}\n`);
    // Another state dir's run is not this teardown's to stop, nor to suggest stopping (issue 31).
    ctx.stdout.write(`${fitCommand('    not stopped from here; it shows with: ', statusCommandFor(r), '', columns, '    ')}\n`);
  }
}
