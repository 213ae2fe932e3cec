import { UserError } from '../errors.js';
import {
  FrontendHttpError,
  FrontendTimeoutError,
  FrontendUnreachableError,
  RequestAbortedError,
  listModels,
  normalizeBaseUrl,
  streamChat,
} from '../host/net/openai-stream.js';
import { probeDocument } from '../probe/document.js';
import { runProbe, type ProbeSettings } from '../probe/run.js';
import { estimatedPrefixTokens, summarize } from '../probe/stats.js';
import { judge, verdictExitCode, type VerdictContext } from '../probe/verdict.js';
import { newestRun } from '../run/which-run.js';
import { workerNamesOfRun } from '../probe/worker-identity.js';
import type { RunView } from '../doctor/types.js';
import { createProgress } from '../ui/probe-progress.js';
import { formatProbeHeader, formatProbeReport } from '../ui/probe-report.js';
import type { CommandContext } from './context.js';
import { DEFAULT_FRONTEND_PORT } from '../defaults.js';

export interface ProbeOptions {
  url?: string;
  /** The run whose frontend to probe (id or name; default the live run). */
  run?: string;
  model?: string;
  prefixes: number;
  repeats: number;
  prefixTokens: number;
  /** Seconds per request. */
  timeout: number;
  /** Seed of the prompts and the send order (default: a fresh one per run); --json reports it. */
  seed?: number;
  /** Tokens per KV block of the workers (default: the live run's plan, else unknown). */
  blockSize?: number;
}

export const DEFAULT_FRONTEND_URL = `http://127.0.0.1:${DEFAULT_FRONTEND_PORT}`;
/** Enough output to time the first token and get the usage chunk; more only costs time. */
const MAX_TOKENS = 8;

function checkUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UserError(`--url: "${raw}" is not a URL; expected e.g. ${DEFAULT_FRONTEND_URL}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new UserError(`--url: "${raw}" must start with http:// or https://, e.g. ${DEFAULT_FRONTEND_URL}`);
  }
  return normalizeBaseUrl(u.toString());
}

/** What run.json tells about the frontend being probed (only when it is that run's frontend). */
function runContext(view: RunView | null): VerdictContext & { kvTokensMin: number | null; blockSize: number | null } {
  if (!view) return { kvTokensMin: null, blockSize: null };
  const cachers = view.record.processes.filter((p) => p.role === 'agg' || p.role === 'prefill');
  const kv = cachers.map((p) => p.kvTokens).filter((k): k is number => typeof k === 'number');
  // The plan knows each worker's block size (the mocker's default is 64, vLLM's 16, FACTS §4).
  const block = view.record.plan?.processes?.find((p) => p.role === 'agg' || p.role === 'prefill')?.blockSize;
  return {
    workersExpected: cachers.length || null,
    routerMode: view.record.plan?.router?.mode ?? null,
    kvTokensMin: kv.length ? Math.min(...kv) : null,
    blockSize: typeof block === 'number' && block > 0 ? block : null,
    engine: view.record.plan?.engine ?? null,
    dynamoVersion: view.record.plan?.dynamo?.version ?? null,
  };
}

/** Exit code after Ctrl-C, as a shell reports a process ended by SIGINT. */
const EXIT_INTERRUPTED = 130;

export default async function probe(ctx: CommandContext, opts: ProbeOptions): Promise<number> {
  // Ctrl-C aborts the request in flight and ends the probe cleanly (the progress bar cleared, one
  // line said); a second Ctrl-C finds no handler left and ends the process the default way.
  const cancel = new AbortController();
  const onSigint = () => cancel.abort();
  process.once('SIGINT', onSigint);
  try {
    return await probeWith(ctx, opts, cancel.signal);
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/** Upper bounds: the prompts are built in memory before the first send. */
export const PROBE_LIMITS = { prefixes: 1000, repeats: 100, prefixTokens: 131_072, totalTokens: 4_194_304 } as const;

function checkBounds(o: ProbeOptions): void {
  const over = (flag: string, v: number, max: number, what: string) => {
    if (v > max) throw new UserError(`${flag}: ${v} is more than ${max.toLocaleString('en-US')} ${what}; use ${max.toLocaleString('en-US')} or fewer`);
  };
  over('--prefixes', o.prefixes, PROBE_LIMITS.prefixes, 'prefixes');
  over('--repeats', o.repeats, PROBE_LIMITS.repeats, 'sends per prefix');
  over('--prefix-tokens', o.prefixTokens, PROBE_LIMITS.prefixTokens, 'tokens (longer than any model\'s context)');
  const total = o.prefixes * o.prefixTokens;
  if (total > PROBE_LIMITS.totalTokens) {
    throw new UserError(
      `--prefixes ${o.prefixes} x --prefix-tokens ${o.prefixTokens} = ${total.toLocaleString('en-US')} tokens of prompts; at most ${PROBE_LIMITS.totalTokens.toLocaleString('en-US')} (lower one of them)`,
    );
  }
}

async function probeWith(ctx: CommandContext, opts: ProbeOptions, signal: AbortSignal): Promise<number> {
  const t0 = performance.now();
  checkBounds(opts);
  if (opts.seed !== undefined && !(Number.isInteger(opts.seed) && opts.seed >= 0 && opts.seed <= 0xffffffff)) {
    throw new UserError(`--seed: ${opts.seed} is not a seed; use a whole number from 0 to 4294967295`);
  }
  const notes: string[] = [];
  const { view, url, ofRun } = await targetOf(ctx, opts, notes);
  const rc = ofRun ? runContext(view) : { kvTokensMin: null, blockSize: null };
  const blockSize = opts.blockSize ?? rc.blockSize;
  const timeoutMs = opts.timeout * 1000;
  const unreachable = (reason: string) => {
    ctx.stderr.write(`dynamo-dev: cannot reach the frontend at ${url}: ${reason}; start one with dynamo-dev up\n`);
    return 1;
  };

  const model = opts.model ?? await firstModel(ctx, url, Math.min(timeoutMs, 10_000), signal, notes, unreachable);
  if (typeof model === 'number') return model;
  const settings = settingsOf(opts, blockSize, rc.kvTokensMin, notes);

  const stderrTty = Boolean((ctx.stderr as { isTTY?: boolean }).isTTY);
  const progress = createProgress(ctx.stderr, ctx.json ? 'off' : stderrTty && ctx.env.CI !== 'true' ? 'tty' : 'lines');
  // A terminal's width (pipes: none, lines stay whole for grep).
  const columns = (ctx.stdout as NodeJS.WriteStream).isTTY ? ((ctx.stdout as NodeJS.WriteStream).columns || Infinity) : Infinity;
  if (!ctx.json) ctx.stdout.write(formatProbeHeader(url, model, settings, columns));

  let run;
  try {
    run = await runProbe({
      settings,
      send: (prompt, sig) => streamChat({ baseUrl: url, model, prompt, maxTokens: MAX_TOKENS, timeoutMs, signal: sig }),
      isFatal: (err) => err instanceof FrontendUnreachableError,
      onProgress: (p) => progress.update(p),
      signal,
    });
  } catch (err) {
    progress.finish();
    if (err instanceof FrontendUnreachableError) return unreachable(err.reason);
    throw err;
  }
  progress.finish();
  const { sends, stopped } = run;
  if (stopped?.reason === 'interrupted') {
    ctx.stderr.write(`dynamo-dev: probe interrupted after ${sends.length} of ${run.planned} requests; nothing judged\n`);
    return EXIT_INTERRUPTED;
  }
  if (stopped?.reason === 'failing') {
    notes.push(`stopped after ${stopped.failures} failed requests in a row (${sends.length} of ${run.planned} sent)`);
  }

  const stats = summarize(sends, { blockSize });
  // The prefixes' real size (the frontend's prompt_tokens), not the requested approximation.
  const sizes = sends.filter((x) => x.promptTokens !== null).map((x) => estimatedPrefixTokens(x));
  const verdict = judge(stats, {
    ...rc, prefixes: settings.prefixes, prefixTokens: sizes.length ? sizes.reduce((a, b) => a + b, 0) / sizes.length : settings.prefixTokens,
  });
  // Which process of the run each worker id is (agg-0), read after the sends: a restarted worker has a new id.
  const workerNames = ofRun && view && stats.workers.length > 0 ? await workerNamesOfRun(view.record, url) : undefined;
  const doc = probeDocument({
    workerNames,
    url,
    model,
    settings: { ...settings, maxTokens: MAX_TOKENS, timeoutSeconds: opts.timeout },
    durationMs: performance.now() - t0,
    sends,
    stats,
    verdict,
    notes,
  });
  ctx.stdout.write(ctx.json ? `${JSON.stringify(doc)}\n` : formatProbeReport(doc, columns));
  if (stopped?.reason === 'failing') {
    // The frontend stopped answering: the job failed, whatever the requests before showed.
    if (!ctx.json) ctx.stderr.write(`dynamo-dev: stopped after ${stopped.failures} failed requests in a row to ${url}: ${stopped.error}\n`);
    return 1;
  }
  if (stats.ok === 0) {
    // Nothing was measured: that is a failed job, not an inconclusive measurement.
    if (!ctx.json) ctx.stderr.write(`dynamo-dev: every request to ${url} failed: ${sends[0]?.error ?? 'no answer'}\n`);
    return 1;
  }
  return verdictExitCode(verdict);
}

/** Which frontend: --url, --run's, the live (or latest) run's, or the default URL; and whether it is that run's. */
async function targetOf(ctx: CommandContext, opts: ProbeOptions, notes: string[]): Promise<{ view: RunView | null; url: string; ofRun: boolean }> {
  let view: RunView | null = null;
  if (opts.run && opts.url) throw new UserError('probe: --url probes that frontend, --run a run\'s; choose one');
  if (opts.run) {
    view = await newestRun(ctx.stateDir, opts.run); // an unknown run is the user's error (exit 2)
  } else {
    try {
      view = await newestRun(ctx.stateDir);
    } catch {
      view = null; // an unreadable state directory must not stop a probe of an explicit --url
    }
  }
  if (opts.url) {
    const url = checkUrl(opts.url);
    return { view, url, ofRun: view !== null && normalizeBaseUrl(view.record.frontendUrl) === url };
  }
  if (view) {
    if (!view.live) notes.push(`run ${view.record.id} is ${view.status}; probing its frontend URL anyway`);
    return { view, url: normalizeBaseUrl(view.record.frontendUrl), ofRun: true };
  }
  notes.push(`no run recorded in ${ctx.stateDir}: probing ${DEFAULT_FRONTEND_URL} (use --url for another frontend)`);
  return { view, url: DEFAULT_FRONTEND_URL, ofRun: false };
}

/**
 * The first model the frontend lists, or the exit code when there is none to probe. Listing models
 * is quick or broken: it gets at most 10 s (`listTimeoutMs`), whatever --timeout allows a completion.
 */
async function firstModel(
  ctx: CommandContext, url: string, listTimeoutMs: number, signal: AbortSignal, notes: string[], unreachable: (reason: string) => number,
): Promise<string | number> {
  try {
    const models = await listModels(url, listTimeoutMs, signal);
    if (models.length === 0) {
      ctx.stderr.write(`dynamo-dev: the frontend at ${url} lists no model yet: wait until its workers are ready (dynamo-dev status)\n`);
      return 1;
    }
    if (models.length > 1) notes.push(`the frontend lists ${models.length} models; probed the first (${models[0]}); use --model for another`);
    return models[0];
  } catch (err) {
    if (err instanceof FrontendUnreachableError) return unreachable(err.reason);
    if (err instanceof FrontendTimeoutError) return unreachable(`no answer to GET /v1/models within ${Number((listTimeoutMs / 1000).toFixed(1))} s`);
    if (err instanceof RequestAbortedError) {
      ctx.stderr.write('dynamo-dev: probe interrupted before the first request\n');
      return EXIT_INTERRUPTED;
    }
    if (err instanceof FrontendHttpError) {
      // Something answers, but not as a Dynamo frontend does (another server on that port, a proxy).
      ctx.stderr.write(`dynamo-dev: ${err.message}; is ${url} a Dynamo frontend? (dynamo-dev status shows the run's URL)\n`);
      return 1;
    }
    throw err;
  }
}

/** The probe's settings, with a note where they cannot show what the user wants to see. */
function settingsOf(opts: ProbeOptions, blockSize: number | null, kvTokensMin: number | null, notes: string[]): ProbeSettings {
  // Fresh for every run, also under --seed: it opens each prefix, so no run can hit an earlier one's cache.
  const nonce = (Date.now() ^ (process.pid << 16)) >>> 0;
  const settings: ProbeSettings = {
    prefixes: opts.prefixes,
    repeats: opts.repeats,
    prefixTokens: opts.prefixTokens,
    seed: opts.seed ?? nonce,
    tag: nonce.toString(36),
    blockSize,
  };
  if (blockSize !== null && settings.prefixTokens < blockSize) {
    notes.push(`--prefix-tokens ${settings.prefixTokens} is less than one KV block (${blockSize} tokens): no engine can reuse such a prefix; raise --prefix-tokens`);
  }
  if (kvTokensMin !== null && settings.prefixes * settings.prefixTokens <= kvTokensMin) {
    notes.push(
      `all prefixes together (${settings.prefixes * settings.prefixTokens} tokens) fit in one worker's KV cache (${kvTokensMin} tokens), ` +
        'so even random routing hits often; raise --prefixes to exceed one worker\'s cache',
    );
  }
  return settings;
}
