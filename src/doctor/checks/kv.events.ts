import { flagValue } from '../../plan/argv.js';
import type { Plan } from '../../plan/types.js';
import { type Check, type CheckResult, type LogSet, fail, pass, skip, warn } from '../types.js';
import { noLogFiles, planFor, where } from '../log-view.js';
import { KV_DIAGNOSTICS_CHECK, KV_DIAGNOSTICS_SINCE, kvDiagnosticsGapText, logsKvDiagnostics, planRelease } from '../../plan/kv-diagnostics.js';

// kv.events: a KV router with events needs every agg/prefill worker to publish KV events
// (newest dynamo.vllm publishes none without --kv-events-config ... "enable_kv_cache_events":true;
// decode workers never publish). When they do not, the router logs ONE warning
// (kv_event_publisher_disabled) and routes by load only: cache hits fall to random level, no error.

export const KV_EVENTS_FIX =
  'give each agg/prefill worker the engine flag `--kv-events-config \'{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:20080","enable_kv_cache_events":true}\'` ' +
  '(a distinct endpoint port per worker; dynamo-dev\'s KV-router recipes add it), or route without events: --set frontend.kvEvents=false ' +
  '(the frontend\'s --no-router-kv-events, approximate mode: `dynamo-dev up agg-router-approx`)';

// The mocker has no --kv-events-config: it publishes its simulated cache events itself unless
// prefix caching is off (dynamo/mocker/args.py, --no-enable-prefix-caching; seen on 1.6.1).
export const MOCKER_KV_EVENTS_FIX =
  'the mocker publishes KV events unless prefix caching is off: drop --no-enable-prefix-caching from the workers\' args, ' +
  'or route without events: --set frontend.kvEvents=false (the frontend\'s --no-router-kv-events, approximate mode)';

const NO_PREFIX_CACHING = '--no-enable-prefix-caching';

const SOURCE_FIX =
  'give each worker its own --kv-events-config endpoint port with "enable_kv_cache_events":true, stop leftovers (`dynamo-dev teardown --orphans`), and use a fresh discovery directory per run';

interface Publisher {
  name: string;
  role: string;
  /** The parsed --kv-events-config, or null when absent / not JSON. */
  config: Record<string, unknown> | null;
  raw: string | null;
}


function parseConfig(raw: string | null): Record<string, unknown> | null {
  if (raw === null) return null;
  try {
    const v = JSON.parse(raw) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * The workers a router diagnostic is about, by our process names: each `worker_id` the router
 * named, with the process whose own log announced that id (scanner WORKER_ID_NEEDLES). An id that
 * no log (or more than one) announced stays an id: never a guess.
 */
export function namedWorkers(logs: LogSet, code: string): { id: string; name: string | null }[] {
  const ids = [...new Set(Object.values(logs.scan.byFile ?? {}).flatMap((fs) => fs.filter((f) => f.code === code).flatMap((f) => f.workerIds ?? [])))];
  const label = new Map(logs.files.map((f) => [f.path, f.process ?? f.path]));
  const owners = new Map<string, Set<string>>();
  for (const [file, own] of Object.entries(logs.scan.workerIds ?? {})) {
    for (const id of own) owners.set(id, (owners.get(id) ?? new Set()).add(label.get(file) ?? file));
  }
  // In the run's process order (agg-0 before agg-1), whatever order the router logged them in.
  const order = [...label.values()];
  const rank = (n: string | null) => (n === null ? Infinity : order.indexOf(n));
  return ids.map((id) => {
    const o = [...(owners.get(id) ?? [])];
    return { id, name: o.length === 1 ? o[0] : null };
  }).sort((a, b) => rank(a.name) - rank(b.name));
}

const workerText = (w: { id: string; name: string | null }) => (w.name ? `${w.name} (worker_id=${w.id})` : `worker_id=${w.id} (unknown process)`);

const check: Check = {
  id: 'kv.events',
  title: 'KV events for the KV router',
  async run(facts): Promise<CheckResult> {
    const [logs, run] = await Promise.all([facts.logs(), facts.run()]);
    const plan: Plan = planFor(logs, run, facts.plan);
    // The argv actually started (run.json) wins over the plan's.
    const procs = logs?.source === 'run' && run ? run.record.processes : plan.processes;
    const mocker = plan.engine === 'mocker';
    const fix = mocker ? MOCKER_KV_EVENTS_FIX : KV_EVENTS_FIX;
    const frontendArgv = procs.find((p) => p.role === 'frontend')?.argv ?? [];
    const approx = frontendArgv.includes('--no-router-kv-events') || frontendArgv.includes('--no-kv-events');
    const disabled = logs?.scan.findings.find((f) => f.code === 'dynamo.kv-events-disabled');
    const missing = logs?.scan.findings.find((f) => f.code === 'dynamo.kv-source-missing');
    const quote = (f: { count: number; file: string; line: number; text: string }) => `${where(logs!, f.file, f.line)} (x${f.count}): ${f.text}`;
    // Who the router means: our process names where a worker's log announced the id it names.
    const disabledWorkers = disabled && logs ? namedWorkers(logs, disabled.code) : [];
    const disabledSummary = disabledWorkers.length > 0
      ? `the router reports kv_event_publisher_disabled for ${disabledWorkers.map((w) => w.name ?? `worker_id=${w.id}`).join(', ')}: no KV events from ${disabledWorkers.length === 1 ? 'it' : 'them'}, routing ignores the cache (hits at random level)`
      : 'the router reports kv_event_publisher_disabled: workers publish no KV events, routing ignores the cache (hits at random level)';
    const disabledDetails = disabled
      ? [quote(disabled), ...(disabledWorkers.length > 0 ? [`the router names ${disabledWorkers.map(workerText).join(', ')}`] : [])]
      : [];
    const missingWorkers = missing && logs ? namedWorkers(logs, missing.code) : [];
    const missingDetails = missing ? [quote(missing), ...(missingWorkers.length > 0 ? [`the router names ${missingWorkers.map(workerText).join(', ')}`] : [])] : [];
    const diagnostics = [disabled, missing].filter((f) => f !== undefined).map((f) => ({
      code: f!.code, count: f!.count, file: f!.file, line: f!.line, text: f!.text,
      workers: logs ? namedWorkers(logs, f!.code).map((w) => ({ workerId: w.id, process: w.name })) : [],
    }));

    if (plan.router.mode !== 'kv' || !plan.router.kvEvents || approx) {
      // Only a KV router that expects events logs these diagnostics: when the logs have one, they
      // come from such a router whatever the plan says (`--logs frontend.log` judged against the
      // default agg recipe), and skipping would call a run without cache-aware routing ready.
      const found = disabled ?? missing;
      if (found) {
        const evidence = { routerMode: plan.router.mode, kvEvents: plan.router.kvEvents && !approx, diagnostics };
        const note = `the logs come from a KV router with events (the plan of ${plan.recipe} does not use one)`;
        return disabled
          ? fail(disabledSummary, fix, [...disabledDetails, note], evidence)
          : warn('the router sees no (or conflicting) KV-event publishers (kv_event_source_not_observed / kv_event_source_ambiguous)', SOURCE_FIX, [...missingDetails, note], evidence);
      }
      if (plan.router.mode !== 'kv') return skip(`router mode ${plan.router.mode} does not use KV events`, { routerMode: plan.router.mode });
      return skip('the KV router runs in approximate mode (--no-router-kv-events): no KV events needed', { routerMode: 'kv', kvEvents: false });
    }

    const publishers: Publisher[] = procs
      .filter((p) => p.role === 'agg' || p.role === 'prefill')
      .map((p) => {
        const raw = flagValue(p.argv, '--kv-events-config');
        return { name: p.name, role: p.role, raw, config: parseConfig(raw) };
      });
    const silent = mocker
      ? publishers.filter((p) => procs.find((q) => q.name === p.name)?.argv.includes(NO_PREFIX_CACHING))
      : publishers.filter((p) => p.config?.enable_kv_cache_events !== true);
    const evidence: Record<string, unknown> = {
      routerMode: 'kv',
      kvEvents: true,
      publishers: publishers.map((p) => ({ name: p.name, role: p.role, enableKvCacheEvents: p.config?.enable_kv_cache_events === true, endpoint: p.config?.endpoint ?? null })),
    };
    const argvDetails = silent.map((p) =>
      mocker
        ? `${p.name}: ${NO_PREFIX_CACHING} in its command line: the mocker publishes no KV events`
        : p.raw === null
        ? `${p.name}: no --kv-events-config in its command line: it publishes no KV events`
        : `${p.name}: --kv-events-config ${p.raw} lacks "enable_kv_cache_events": true`,
    );

    // No log file at all (a run whose logs are gone, an empty --logs folder) is no evidence either way.
    if (!logs || logs.scan.files === 0) {
      if (silent.length > 0) {
        return fail(`${silent.map((p) => p.name).join(', ')} would publish no KV events to the KV router`, fix, argvDetails, evidence);
      }
      const why = logs ? noLogFiles(logs) : (await facts.noLogs()).summary;
      return skip(`${why} (the plan's ${publishers.length} publishing worker${publishers.length === 1 ? '' : 's'} enable KV events)`, evidence);
    }

    evidence.diagnostics = diagnostics;

    if (disabled || silent.length > 0) {
      const details = [...disabledDetails, ...argvDetails];
      const summary = disabled ? disabledSummary : `${silent.map((p) => p.name).join(', ')} publish no KV events to the KV router`;
      return fail(summary, fix, details, evidence);
    }
    if (missing) {
      return warn(
        'the router sees no (or conflicting) KV-event publishers (kv_event_source_not_observed / kv_event_source_ambiguous)',
        SOURCE_FIX,
        missingDetails,
        evidence,
      );
    }
    // No diagnostic is evidence only from a router that would have logged one: before 1.4.0 none
    // does (plan/kv-diagnostics.ts). The release of a run's logs is the one its plan was made for;
    // of other logs (--logs), or a run whose plan did not read it, the one installed now.
    const release = (logs.source === 'run' ? planRelease(plan) : null) ?? await installedRelease(facts);
    const logged = logsKvDiagnostics(release);
    Object.assign(evidence, { release, diagnosticsLogged: logged });
    const workers = `${publishers.length} worker${publishers.length === 1 ? '' : 's'}`;
    if (logged === false) {
      return warn(
        `${kvDiagnosticsGapText(release!)}: ${logs.label} cannot show whether the KV router gets KV events (the command lines of its ${workers} enable them)`,
        KV_DIAGNOSTICS_CHECK,
        [`a router of Dynamo ${release} that gets no KV events logs nothing and routes by load: its logs read the same whether events arrive or not`],
        evidence,
      );
    }
    const unknown = logged === null
      ? [`the Dynamo release of these logs is unknown: releases before ${KV_DIAGNOSTICS_SINCE} log no kv_event_publisher_disabled, so for them no diagnostic proves nothing`]
      : [];
    return pass(`${workers} publish KV events; no router diagnostic in ${logs.label}`, evidence, unknown);
  },
};

/** The ai-dynamo version of the interpreter doctor asks (null when it has none or cannot be asked). */
async function installedRelease(facts: Parameters<Check['run']>[0]): Promise<string | null> {
  const py = await facts.python().catch(() => null);
  return py?.modules.dynamo?.ok ? py.modules.dynamo.version ?? null : null;
}

export default check;
