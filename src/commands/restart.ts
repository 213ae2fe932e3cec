import type { CommandContext } from './context.js';
import { EXIT } from './context.js';
import { UserError } from '../errors.js';
import type { RestartEvent } from '../run/restart-request.js';
import { DEFAULT_GRACE_S } from '../defaults.js';

export interface RestartOptions {
  run?: string;
  /** Seconds between SIGTERM and SIGKILL. */
  grace?: number;
  /** Seconds; 0 = the run's own readiness deadline. */
  readyTimeout?: number;
  json?: boolean;
}

/**
 * `restart PROCESS`: the run's supervisor stops the process as teardown would and starts it again
 * from the plan (restart-request.ts); exit 0 ready again, 1 it did not come back, 2 no such process or run.
 */
export default async function restart(ctx: CommandContext, name: string, opts: RestartOptions): Promise<number> {
  (await import('../run/proc.js')).assertProcIsOurs();
  const [{ readRun, judgeRun }, { scanRuns }, { askRestart, cannotRestart }, ui, { describeEnd }, { theLiveRun }] = await Promise.all([
    import('../run/state.js'), import('../run/run-scan.js'), import('../run/restart-client.js'), import('../ui/restart-report.js'), import('../run/losses.js'), import('../run/which-run.js'),
  ]);
  const rec = await theLiveRun(ctx.stateDir, opts.run, { command: 'restart', process: name });
  const names = rec.processes.map((p) => p.name);
  if (!names.includes(name)) throw new UserError(`restart: no process "${name}" in run ${rec.id}; its processes: ${names.join(', ')}`);
  const judged = await judgeRun(ctx.stateDir, rec, await scanRuns(ctx.stateDir, [rec]));
  if (!judged.liveness.supervisor && !judged.liveness.processes) {
    throw new UserError(`restart: run ${rec.id} is not running (${judged.status}); nothing to restart`, 'dynamo-dev up [RECIPE]   (a new run)');
  }
  const tty = !ctx.json && Boolean((ctx.stdout as NodeJS.WriteStream).isTTY);
  const columns = tty ? ctx.stdout.columns || 80 : Infinity;
  const why = cannotRestart(judged.record, judged.liveness.supervisor);
  const events: RestartEvent[] = [];
  if (!ctx.json) ctx.stdout.write(ui.formatRestartHeader(name, rec.id, rec.name, columns));
  // Requests left by restart commands that ended (killed while waiting) are never acted on: said, and removed.
  const { withdrawLeftRequests, orphanReason } = await import('../run/restart-request.js');
  const withdrawn = withdrawLeftRequests(ctx.stateDir, rec.id, rec.state);
  if (!ctx.json) for (const w of withdrawn) ctx.stdout.write(ui.formatRestartNotice(`! ${orphanReason(w)}; withdrawn`, columns));
  const answer = why
    ? { event: 'done' as const, ok: false as const, process: name, reason: why, diagnosis: null, lastLines: [], log: null, runState: rec.state }
    : await askRestart({
      stateDir: ctx.stateDir, rec: judged.record, process: name,
      graceMs: Math.round((opts.grace ?? DEFAULT_GRACE_S) * 1000), readyTimeoutMs: Math.round((opts.readyTimeout ?? 0) * 1000),
      onEvent: (e) => {
        events.push(e);
        const text = ctx.json ? null : ui.formatRestartStep(e, columns);
        if (text) ctx.stdout.write(text);
      },
    });
  // The verdict is status's own judgement of the run now, not the supervisor's word alone.
  const after = await readRun(ctx.stateDir, rec.id).catch(() => judged.record);
  const now = await judgeRun(ctx.stateDir, after, await scanRuns(ctx.stateDir, [after]));
  const lostWords = now.lost.map((l) => `${l.name} ${describeEnd(l)}`).join('; ');
  const ok = answer.ok && now.status === 'ready';
  if (ctx.json) {
    const { event: _e, ok: _ok, ...detail } = answer;
    ctx.stdout.write(`${JSON.stringify({ run: rec.id, name: rec.name ?? null, ...detail, process: name, ok, status: now.status, lost: now.lost, events, withdrawn: withdrawn.map((w) => ({ id: w.id, process: w.process, by: w.by })) }, null, 2)}\n`);
  } else {
    ctx.stdout.write(ui.formatRestartVerdict(answer, { id: rec.id, status: now.status, why: now.status === 'ready' ? null : lostWords || null }, { columns, model: rec.model }));
  }
  return ok ? EXIT.ok : EXIT.failed;
}
