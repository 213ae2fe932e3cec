import { modelReadinessOf, workerInstancesOf } from '../../host/net/parse-frontend.js';
import { plannedWorkers } from '../../plan/planned-workers.js';
import { fail, pass, skip, warn, type Check } from '../types.js';

// frontend.models: the live run's frontend serves the model with every planned worker behind it.
// The frontend's /health status word says nothing about workers: from 1.5 it answers 503
// "not_ready" during its own initial discovery and then "healthy" with or without workers (up to
// 0.7 it said "unhealthy" until a worker registered, sometimes with HTTP 200) (FACTS §4,
// lib/llm/src/http/service/health.rs). So workers are counted: from /v1/models/<model>/ready
// (1.6+, worker counts per worker type) or else from the `generate` instances /health lists, and
// compared with the plan. A run that lost a worker still answers requests, on fewer workers: an
// experiment would measure the wrong thing, so that fails, naming how many are missing.

const statusOf = (body: unknown): string | null =>
  body !== null && typeof body === 'object' && typeof (body as { status?: unknown }).status === 'string' ? (body as { status: string }).status : null;
const messageOf = (body: unknown): string | null =>
  body !== null && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string' ? (body as { message: string }).message : null;

export { plannedWorkers } from '../../plan/planned-workers.js';

/** The command that shows the frontend's log (the run's, when doctor knows it). */
const frontendLog = (runId: string | null) => `\`dynamo-dev logs frontend${runId ? ` --run ${runId}` : ''}\``;

/**
 * Restarting the run: `dynamo-dev up` alone would start the default recipe, not this run's (whose
 * recipe, file and --set overrides only the user's own command line has).
 */
const upAgainText = (runId: string | null) =>
  `stop it (\`dynamo-dev teardown${runId ? ` --run ${runId}` : ''}\`) and start it again with the same \`dynamo-dev up\` command`;

const check: Check = {
  id: 'frontend.models',
  title: 'Frontend is healthy and lists the model',
  async run(facts) {
    const [fe, run] = await Promise.all([facts.frontend(), facts.run()]);
    if (!fe) return skip('no live run');
    const model = run?.live ? run.record.model : facts.plan.model;
    const runId = run?.record.id ?? null;
    const starting = run?.status === 'starting';
    const expected = run?.live ? plannedWorkers(run.record) : null;
    const readiness = fe.modelReady?.ok ? modelReadinessOf(fe.modelReady.body) : null;
    const instances = workerInstancesOf(fe.health.body);
    // The model's own count when the frontend has one (it also knows which worker types serve it).
    const seen = readiness ? (readiness.ready ? readiness.workers : 0) : instances.length;
    // The request that was answered, as sent (the model id is encoded in its path).
    const countedBy = readiness ? fe.modelReady!.url : fe.health.url;
    const evidence = {
      url: fe.url, model, health: fe.health.body, healthStatus: fe.health.status, modelIds: fe.modelIds, runId,
      workers: { seen, expected, countedBy: readiness ? 'model-ready' : 'health-instances', byType: readiness?.byType ?? null, instances: instances.map((i) => i.id) },
      modelReady: fe.modelReady?.body ?? null,
    };
    if (fe.health.error !== null && fe.models.error !== null) {
      return fail(
        `frontend at ${fe.url} does not answer: ${fe.health.error}`,
        `look at its log (${frontendLog(runId)}); ${upAgainText(runId)}`,
        [`GET ${fe.health.url}: ${fe.health.error}`],
        evidence,
      );
    }
    const status = statusOf(fe.health.body);
    const listed = fe.modelIds.includes(model);
    if (status === 'not_ready' || status === 'shutting_down') {
      const msg = messageOf(fe.health.body);
      const summary = status === 'not_ready'
        ? `/health says not_ready${msg ? `: ${msg}` : ''}: the frontend has not finished its initial discovery`
        : '/health says shutting_down: the frontend is stopping';
      const fix = `look at its log (${frontendLog(runId)}) for a discovery error; if it stays so, ${upAgainText(runId)}`;
      return starting ? warn(`${summary} (the run is still starting)`, fix, [], evidence) : fail(summary, fix, [`GET ${fe.health.url} -> ${JSON.stringify(fe.health.body)}`], evidence);
    }
    // A planned worker the run has lost (status: degraded) fails at once, whatever the frontend
    // counts: a SIGKILLed 1.6.1 mocker stays registered (and counted) until its file-discovery
    // lease expires, about 10 s later (observed; test/dynamo/worker-killed.test.ts).
    const lostWorkers = run?.live ? (run.lost ?? []).filter((l) => l.role !== 'frontend') : [];
    if (lostWorkers.length > 0 && expected !== null) {
      const names = lostWorkers.map((l) => l.name).join(', ');
      const stale = seen > expected - (plannedWorkers({ processes: run!.record.processes.filter((p) => lostWorkers.some((l) => l.name === p.name)) }) ?? 0);
      return fail(
        `${names} ${lostWorkers.length === 1 ? 'is' : 'are'} gone; the frontend counts ${seen} of the ${expected} planned workers${stale ? ' (it still counts what is gone until the registration expires)' : ''}, so requests run on fewer workers than the experiment assumes`,
        // As status and kv.allocated say it: `restart` brings one worker back in seconds.
        `see how it ended (\`dynamo-dev status${runId ? ` --run ${runId}` : ''}\`, \`dynamo-dev diagnose\`), then start ${lostWorkers.length === 1 ? 'it' : 'each'} again alone: ${lostWorkers.map((l) => `\`dynamo-dev restart ${l.name}${runId ? ` --run ${runId}` : ''}\``).join(', ')}; or ${upAgainText(runId)}`,
        [`counted from ${countedBy}`],
        { ...evidence, lost: lostWorkers.map((l) => l.name) },
      );
    }
    if (seen === 0) {
      const msg = status && status !== 'healthy' ? `/health says ${status}${messageOf(fe.health.body) ? `: ${messageOf(fe.health.body)}` : ''}; ` : '';
      const summary = `${msg}the frontend counts no worker${expected !== null ? ` of the ${expected} planned` : ''}: no worker is registered with it`;
      const fix = 'check that every worker is alive and registered (`dynamo-dev status`, `dynamo-dev doctor --only kv.allocated,logs.errors`)';
      return starting ? warn(`${summary} (the run is still starting)`, fix, [], evidence) : fail(summary, fix, [`GET ${countedBy} -> ${JSON.stringify(readiness ? fe.modelReady?.body : fe.health.body)}`], evidence);
    }
    if (expected !== null && seen < expected) {
      const missing = expected - seen;
      const summary = `the frontend counts ${seen} of the ${expected} planned workers: ${missing} ${missing === 1 ? 'is' : 'are'} missing, so requests run on fewer workers than the experiment assumes`;
      const fix = `see which process ended (\`dynamo-dev status${runId ? ` --run ${runId}` : ''}\`, \`dynamo-dev diagnose\`), then ${upAgainText(runId)}`;
      return starting ? warn(`${summary} (the run is still starting)`, fix, [`counted from ${countedBy}`], evidence) : fail(summary, fix, [`counted from ${countedBy}`], evidence);
    }
    if (!listed && fe.models.error !== null) {
      // The list was not read: "does not list" (listed: nothing) would send the user after the model's registration.
      const summary = `the frontend counts ${seen} worker${seen === 1 ? '' : 's'} but GET /v1/models failed: ${fe.models.error}`;
      const fix = `look at its log (${frontendLog(runId)}); if it stays so, ${upAgainText(runId)}`;
      const details = [`GET ${fe.models.url}: ${fe.models.error}`];
      return starting ? warn(summary, fix, details, evidence) : fail(summary, fix, details, evidence);
    }
    if (!listed) {
      const summary = `the frontend counts ${seen} worker${seen === 1 ? '' : 's'} but /v1/models does not list ${model}`;
      const details = [`listed: ${fe.modelIds.length ? fe.modelIds.join(', ') : 'nothing'}`];
      const fix = `wait a few seconds after the workers are ready (\`dynamo-dev up\` does), or check that the workers serve --model ${model}`;
      return starting ? warn(summary, fix, details, evidence) : fail(summary, fix, details, evidence);
    }
    if (expected !== null && seen > expected) {
      return warn(
        `the frontend counts ${seen} workers, the run planned ${expected}: others registered in the same discovery and may take this run's requests`,
        'use file discovery (a fresh directory per run) or stop the other workers (`dynamo-dev doctor --only procs.leftover`)',
        [`counted from ${countedBy}`],
        evidence,
      );
    }
    const of = expected !== null ? `${seen} of ${expected} workers` : `${seen} worker${seen === 1 ? '' : 's'}`;
    return pass(`${of} counted; ${fe.url}/v1/models lists ${model}`, evidence);
  },
};

export default check;
