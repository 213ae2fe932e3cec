import { resolve } from 'node:path';
import { UserError } from '../errors.js';
import type { ScanResult } from '../diagnose/types.js';
import type { RunEnd } from '../ui/diagnose-report.js';
import type { CommandContext } from './context.js';
import { EXIT } from './context.js';

// `dynamo-dev diagnose PATH...`: scan logs, print each finding once (errors first), exit 1 on errors.

export default async function diagnose(ctx: CommandContext, given: string[], opts: { json?: boolean; run?: string }): Promise<number> {
  if (given.length > 0 && opts.run) throw new UserError('diagnose: give log paths or --run ID, not both');
  // No path: the latest run's logs (or --run's), like logs, status and doctor.
  let run: RunEnd | null = null;
  let paths = given;
  if (given.length === 0) {
    const { pickRun } = await import('../run/pick-run.js');
    const { existingPaths } = await import('../host/files/exists.js');
    const rec = await pickRun(ctx.stateDir, opts.run, 'logs to diagnose');
    run = {
      id: rec.id,
      processes: rec.processes.map((p) => ({ name: p.name, state: p.state, exitCode: p.exitCode, signal: p.signal, log: p.log, started: p.pid !== null })),
    };
    paths = existingPaths(rec.processes.map((p) => p.log));
    if (paths.length === 0) throw new UserError(`run ${rec.id} has no log files yet (${rec.processes.map((p) => p.log).join(', ')})`);
  }
  const { scanPaths, LOG_NAMES_TEXT } = await import('../host/logs/log-scan.js');
  const t0 = performance.now();
  // Paths the user named may be pipes (`/dev/stdin`, `<(zcat old.log.gz)`): read them to their end.
  // A run's logs are paths we build: one that is not a regular file (a FIFO put there) is skipped and said.
  let result = await scanPaths(paths, { pipes: given.length > 0, skipOdd: given.length === 0 });
  // The logs of a run: its processes' exits count too (a crash with no known line is no "0 errors").
  // Only paths shaped like a run's logs can belong to a run (the record code loads only for them).
  const { runPathParts } = await import('../run/paths.js');
  const runs = paths.some((p) => runPathParts(p) !== null) ? await (await import('../run/state.js')).runsOfPaths(paths) : [];
  for (const r of runs) {
    const [{ addExitFindings }, { judgeRun }, { scanRuns }] = await Promise.all([
      import('../run/exit-findings.js'), import('../run/state.js'), import('../run/run-scan.js'),
    ]);
    const j = await judgeRun(r.stateDir, r.record, await scanRuns(r.stateDir, [r.record]));
    result = await addExitFindings(result, j.record, { lost: j.lost, only: r.only ?? undefined });
    // A release whose router cannot log missing KV events: said, so no finding is no all-clear.
    const fe = r.record.processes.find((p) => p.role === 'frontend')?.log ?? null;
    const kv = (await import('../diagnose/kv-diagnostics-finding.js')).kvDiagnosticsFinding(r.record.plan, fe && (!r.only || [...r.only].some((f) => resolve(f) === resolve(fe))) ? fe : null);
    if (kv) result = { ...result, findings: [...result.findings, kv] };
  }
  const ms = Math.round(performance.now() - t0);
  result = await withFittedFixes(result, runs);
  // Only folders can yield no file (a file named is always scanned): "no failure found" would
  // then be a false all-clear.
  const partial = result.partial ?? [];
  if (result.files === 0 && partial.length > 0) throw new UserError(partial.map((p) => `${p.file}: ${p.reason}`).join('; '));
  if (result.files === 0) {
    throw new UserError(
      `${paths.join(', ')}: no log files in ${paths.length === 1 ? 'this folder' : 'these folders'} (looked for ${LOG_NAMES_TEXT})`,
      'name the log files themselves: dynamo-dev diagnose FOLDER/FILE ...',
    );
  }
  // Nothing could be read at all (every file an unreadable .gz): as false an all-clear as no file.
  if (partial.length > 0 && partial.length === result.files && result.bytes === 0) {
    throw new UserError(partial.map((p) => `${p.file}: ${p.reason}`).join('; '));
  }
  // On stderr in both modes: the --json document keeps its contract shape.
  for (const p of partial) ctx.stderr.write(`dynamo-dev: warning: ${p.file}: ${p.reason}\n`);
  // The report (and chalk) loads only to render or to judge a run's ends: --json over log files needs neither.
  const report = !ctx.json || run ? await import('../ui/diagnose-report.js') : null;
  if (ctx.json) {
    const doc = {
      files: result.files,
      bytes: result.bytes,
      findings: result.findings.map((f) => ({
        code: f.code, severity: f.severity, count: f.count, file: f.file, line: f.line, text: f.text, explanation: f.explanation, fix: f.fix,
      })),
    };
    ctx.stdout.write(`${JSON.stringify(run ? { ...doc, run } : doc)}\n`);
  } else {
    // Wrapped to the terminal's width on a terminal; piped, one line per field (scripts, grep).
    const columns = ctx.stdout.isTTY ? ctx.stdout.columns || Infinity : Infinity;
    ctx.stdout.write(report!.renderDiagnosis(result, ms, run, columns));
  }
  // A process that died on its own is a failure even when its log matches nothing known.
  const crashed = run !== null && run.processes.some(report!.diedOnItsOwn);
  return crashed || result.findings.some((f) => f.severity === 'error') ? EXIT.failed : EXIT.ok;
}

type RunOfPaths = Awaited<ReturnType<typeof import('../run/state.js')['runsOfPaths']>>[number];

/**
 * A fix's placeholders filled where the log tells them, so the command can be pasted: MODEL from
 * the quoted line (a lock's cache folder) or the run's model; PROCESS and RUN from the run whose
 * process wrote the log (`dynamo-dev logs agg-0 --lines 80`).
 */
async function withFittedFixes(result: ScanResult, runs: readonly RunOfPaths[]): Promise<ScanResult> {
  const [{ fillFix, modelNamedIn }, { chooseFix, planContext }, { signatureFor }] = await Promise.all([
    import('../diagnose/fill-fix.js'), import('../diagnose/choose-fix.js'), import('../diagnose/signatures.js'),
  ]);
  const writers = new Map<string, { process: string; run: string; model: string; ctx: ReturnType<typeof planContext> }>();
  for (const r of runs) {
    const ctx = planContext(r.record.plan);
    for (const p of r.record.processes) writers.set(resolve(p.log), { process: p.name, run: r.record.id, model: r.record.model, ctx });
  }
  return {
    ...result,
    findings: result.findings.map((f) => {
      const w = writers.get(resolve(f.file));
      // A run's log: the fix chosen again with what its plan shows (recipe settings, workers sharing the GPU).
      const sig = signatureFor(f.code);
      const fix = w && sig && f.code !== 'run.process-exited' ? chooseFix(f.code, f.text, sig.fix, w.ctx) : f.fix;
      return { ...f, fix: fillFix(fix, { model: modelNamedIn(f.text) ?? w?.model, process: w?.process, run: w?.run }) };
    }),
  };
}
