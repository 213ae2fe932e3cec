import type { CommandContext } from './context.js';
import { EXIT } from './context.js';
import type { BenchEvent, PreparedVariant } from '../run/bench.js';
import type { Engine } from '../bench/presets.js';
import type { BenchInput } from '../run/bench-prepare.js';

/** bench's options: what the service takes from the command line (run/bench-prepare.ts), and how to render. */
export type BenchOptions = Omit<BenchInput, 'env' | 'python' | 'release' | 'stateDir' | 'recipes'> & {
  /** --ready-timeout S for every variant's up. */
  readyTimeout?: number;
  json?: boolean;
};

/**
 * `dynamo-dev bench RECIPE... | --preset NAME` (CLI.md, issue 23): every variant through preflight,
 * up (detached, real readiness), the gates, AIPerf, teardown. Everything the user gave is checked
 * before anything starts: a bad preset, an unknown --vary key, no AIPerf are exit 2.
 */
export default async function bench(ctx: CommandContext, recipes: string[], opts: BenchOptions): Promise<number> {
  if (opts.device !== undefined) opts = { ...opts, set: [...(opts.set ?? []), ...(await import('./device-option.js')).deviceSets(opts.device)] };
  // A --plot the end could not write is found now, not after the whole bench ran.
  if (opts.plot) await import('../host/files/plot-file.js').then((m) => m.checkPlotTarget(opts.plot!));
  const { prepareBench } = await import('../run/bench-prepare.js');
  const { doc, variants, python, aiperf, header, ranEngine } = await prepareBench({ env: ctx.env, python: ctx.python, release: ctx.release, stateDir: ctx.stateDir, recipes, ...opts });
  const { say, note } = await benchOutput(ctx);
  say(header);
  const track = await progressTracker(ctx, say, { ranEngine, variants, concurrency: doc.concurrency, repeats: doc.repeats, requests: doc.requests });
  const { runVariants } = await import('../run/bench-start.js');
  const result = await runVariants({ doc, variants }, {
    env: ctx.env, stateDir: ctx.stateDir, python, aiperf,
    onEvent: (e) => say(track(e)),
    // The terminal echoed ^C with no newline: what follows starts on a line of its own.
    onInterrupt: () => ctx.interactive && ctx.stdout.write('\n'),
    start: { python: ctx.python, release: ctx.release, sets: opts.set ?? [], model: opts.model, readyTimeoutS: opts.readyTimeout, preflight: opts.preflight !== false, warn: (text) => ctx.stderr.write(`dynamo-dev: ${text}\n`) },
  });
  const shown = await showResult(ctx, doc.id, opts.plot, note);
  if (result.interrupted) {
    // Said only as observed: a run of this state directory still live after the interrupt is named.
    const left = await (await import('../run/state.js')).findRunView(ctx.stateDir);
    note(left?.live
      ? `dynamo-dev: bench interrupted: run ${left.record.id} is still ${left.status} (\`dynamo-dev teardown --run ${left.record.id}\`); what was measured is kept`
      : 'dynamo-dev: bench interrupted: nothing left running; what was measured is kept');
    return EXIT.interrupted;
  }
  // A control invalid as expected is the preset working; every other invalid or failed variant fails the bench.
  const { variantFails } = await import('../bench/controls.js');
  if (shown.stored.variants.some(variantFails) || !shown.plotWritten) return EXIT.failed;
  return EXIT.ok;
}

/** Progress on stdout (stderr with --json), notes on stderr; on a terminal each line wrapped at words, continuations under the text. */
async function benchOutput(ctx: CommandContext): Promise<{ say(text: string): void; note(text: string): void }> {
  const { wrapWords } = await import('../ui/fit.js');
  const width = ctx.interactive ? ctx.stdout.columns ?? 80 : null;
  return {
    say: (text) => {
      const lines = text.split('\n').flatMap((l) => (width === null ? [l] : wrapWords(l, width, `${/^ */.exec(l)![0]}    `)));
      (ctx.json ? ctx.stderr : ctx.stdout).write(`${lines.join('\n')}\n`);
    },
    note: (text) => ctx.stderr.write(`${(width === null ? [text] : wrapWords(text, width, '  ')).join('\n')}\n`),
  };
}

/** The time it will take: said before anything starts, then (on a terminal) the time left on the progress lines. */
async function progressTracker(
  ctx: CommandContext, say: (text: string) => void,
  b: { ranEngine: Engine | 'mixed'; variants: PreparedVariant[]; concurrency: number[]; repeats: number; requests: number },
): Promise<(e: BenchEvent) => string> {
  const { ranEngine, variants, concurrency, repeats, requests } = b;
  const est = await import('../bench/estimate.js');
  let progress = est.benchProgress(ranEngine, variants, concurrency, repeats, requests);
  const byName = new Map(variants.map((v, i) => [v.name, i]));
  say(`estimate: ${est.aboutLeft(est.remainingMs(progress))} (${progress.steps.filter((x) => x.kind === 'load').length} load runs of ${requests} requests; from typical ${ranEngine === 'mocker' ? 'mocker' : 'vLLM'} times, refined as it runs)`);
  let variantStart = Date.now();
  return (e: BenchEvent): string => {
    const i = byName.get(e.name) ?? -1;
    if (e.event === 'variant') variantStart = Date.now();
    else if (e.event === 'up') {
      progress = est.stepDone(progress, { kind: 'up', variant: i }, Date.now() - variantStart);
      if (e.code !== 0) progress = est.variantEnded(progress, i, false);
    } else if (e.event === 'gates' && e.gates.some((g) => g.status === 'fail')) progress = est.variantEnded(progress, i, true);
    else if (e.event === 'load') {
      progress = est.stepDone(progress, { kind: 'load', variant: i, concurrency: e.concurrency, requests }, e.ms);
      if (!e.metrics) progress = est.variantEnded(progress, i, true);
    } else if (e.event === 'teardown') progress = est.stepDone(progress, { kind: 'teardown', variant: i }, e.ms);
    else if (e.event === 'done') progress = est.variantEnded(progress, i, false);
    const line = progressLine(e);
    // Piped: plain lines (a log reads the same every time); a terminal gets the time left.
    if (!ctx.interactive || ctx.json || !['variant', 'up', 'load'].includes(e.event)) return line;
    const left = est.remainingMs(progress);
    return `${line} · ${left > 0 ? `${est.aboutLeft(left)} left` : 'finishing'}`;
  };
}

/**
 * The report is the stored document rendered as `bench show ID` renders it: read back, so what is
 * printed now is what `bench show` prints later, byte for byte. Then the plot, also after an
 * interrupt; a write that fails is said, the report stands.
 */
async function showResult(ctx: CommandContext, id: string, plot: string | undefined, note: (text: string) => void) {
  const [store, { renderResult }, { terminalOf }] = await Promise.all([import('../run/bench-store.js'), import('../ui/bench-render.js'), import('./bench-stored.js')]);
  const stored = await store.readBenchResult(ctx.stateDir, id);
  const rendered = renderResult(stored, await terminalOf(ctx));
  if (ctx.json) ctx.stdout.write(`${JSON.stringify(stored, null, 2)}\n`);
  else ctx.stdout.write(`\n${rendered.text}${rendered.text.endsWith('\n') ? '' : '\n'}`);
  note(`result: ${store.benchResultPath(ctx.stateDir, id)} (again: \`dynamo-dev bench show ${id}\`)`);
  if (!plot) return { stored, plotWritten: true };
  try {
    const { writePlotFile } = await import('../host/files/plot-file.js');
    await writePlotFile(plot, rendered.svg());
    note(`plot: ${plot}`);
    return { stored, plotWritten: true };
  } catch (err) {
    note(`dynamo-dev: ${(err as Error).message}`);
    return { stored, plotWritten: false };
  }
}

const fmt = (n: number, d = 1) => n.toFixed(d);

function progressLine(e: BenchEvent): string {
  switch (e.event) {
    case 'variant': return `[${e.index + 1}/${e.total}] ${e.name}`;
    case 'up': return e.code === 0 ? `  ${e.name}: ready (run ${e.runId})` : `  ${e.name}: up failed (exit ${e.code})${e.reason ? `: ${e.reason}` : ''}`;
    case 'gates': {
      const failed = e.gates.filter((g) => g.status === 'fail');
      if (failed.length === 0) {
        // processes.alive judges the load: before it, it is waiting, not unknown.
        const later = e.phase === 'ready' ? e.gates.filter((g) => g.id === 'processes.alive' && g.status === 'unknown') : [];
        const unknown = e.gates.filter((g) => g.status === 'unknown' && !later.includes(g));
        const parts = [`${e.gates.filter((g) => g.status === 'pass').length} pass`, ...unknown.map((g) => `${g.id} unknown (${g.summary})`), ...later.map((g) => `${g.id} after the load`)];
        return `  ${e.name}: gates ${e.phase === 'ready' ? 'at ready' : 'after the load'}: ${parts.join(', ')}`;
      }
      return failed.map((g) => `  ${e.name}: gate ${g.id} FAILED: ${g.summary}`).join('\n');
    }
    case 'load': {
      const at = `concurrency ${e.concurrency}, repeat ${e.repeat + 1}`;
      if (!e.metrics) return `  ${e.name}: ${at}: ${e.error}`;
      const m = e.metrics;
      return `  ${e.name}: ${at}: TTFT mean ${fmt(m.ttftMeanMs)} ms, p50 ${fmt(m.ttftP50Ms)} ms, ITL p50 ${fmt(m.itlP50Ms)} ms, ${fmt(m.outputTokensPerSec)} tok/s, ${fmt(m.requestsPerSec, 2)} req/s, cache hits ${m.cacheHitShare === null ? 'unknown' : `${fmt(m.cacheHitShare * 100)}%`}${m.errors ? `, ${m.errors} failed request${m.errors === 1 ? '' : 's'} of ${m.errors + m.requests}` : ''}`;
    }
    case 'teardown': return `  ${e.name}: stopped run ${e.runId} in ${fmt(e.ms / 1000)} s${e.remaining ? `; ${e.remaining} process(es) remain: see \`dynamo-dev status\`` : ''}`;
    case 'done': return `  ${e.name}: ${e.status.toUpperCase()}${e.reason ? `: ${e.reason}` : ''}`;
  }
}
