import { fail, pass, skip, warn, type Check } from '../types.js';

// The frontend answers /health with "healthy" only once a worker registered (FACTS §4; sometimes
// "unhealthy" with HTTP 200, so the JSON decides), and lists a model in /v1/models a few seconds
// after its worker is ready. Load sent before that fails with 404s or lands on no worker.

const statusOf = (body: unknown): string | null =>
  body !== null && typeof body === 'object' && typeof (body as { status?: unknown }).status === 'string' ? (body as { status: string }).status : null;
const messageOf = (body: unknown): string | null =>
  body !== null && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string' ? (body as { message: string }).message : null;

const check: Check = {
  id: 'frontend.models',
  title: 'Frontend is healthy and lists the model',
  async run(facts) {
    const [fe, run] = await Promise.all([facts.frontend(), facts.run()]);
    if (!fe) return skip('no live run');
    const model = run?.live ? run.record.model : facts.plan.model;
    const runId = run?.record.id ?? null;
    const evidence = { url: fe.url, model, health: fe.health.body, healthStatus: fe.health.status, modelIds: fe.modelIds, runId };
    const starting = run?.status === 'starting';
    if (fe.health.error !== null && fe.models.error !== null) {
      return fail(
        `frontend at ${fe.url} does not answer: ${fe.health.error}`,
        `look at its log (\`dynamo-dev logs frontend${runId ? ` --run ${runId}` : ''}\`); restart with \`dynamo-dev teardown\` and \`dynamo-dev up\``,
        [`GET ${fe.health.url}: ${fe.health.error}`],
        evidence,
      );
    }
    const status = statusOf(fe.health.body);
    const listed = fe.modelIds.includes(model);
    if (status !== 'healthy') {
      const msg = messageOf(fe.health.body);
      const summary = `/health says ${status ?? `HTTP ${fe.health.status ?? '?'}`}${msg ? `: ${msg}` : ''}; no worker is registered with the frontend`;
      const fix = 'check that every worker logged its KV cache size and answers /health (`dynamo-dev doctor --only kv.allocated,logs.errors`, `dynamo-dev status`)';
      return starting ? warn(`${summary} (the run is still starting)`, fix, [], evidence) : fail(summary, fix, [`GET ${fe.health.url} -> ${JSON.stringify(fe.health.body)}`], evidence);
    }
    if (!listed) {
      const summary = `/health is healthy but /v1/models does not list ${model}`;
      const details = [`listed: ${fe.modelIds.length ? fe.modelIds.join(', ') : 'nothing'}`];
      const fix = `wait a few seconds after the workers are ready (\`dynamo-dev up\` does), or check that the workers serve --model ${model}`;
      return starting ? warn(summary, fix, details, evidence) : fail(summary, fix, details, evidence);
    }
    return pass(`healthy; ${fe.url}/v1/models lists ${model}`, evidence);
  },
};

export default check;
