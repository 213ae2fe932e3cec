import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { FIXTURES } from '../helpers/cli.js';
import { stripAnsi } from '../../src/diagnose/line.js';
import { cleanup, cli, json, logOf, portBlock, portSets, python, realHome, until, type Home } from './helpers.js';
import { EMBEDDED_MODEL } from '../../src/plan/embedded-model.js';

// The fakes of test/fixtures/python stand in for Dynamo in `npm test`. Here a fact of each fake is
// compared with the released process it imitates, so they cannot drift from reality unnoticed:
// the frontend's /health, /v1/models and /v1/models/<model>/ready shapes, the mocker's /health,
// its log line and block size, and the router's kv_event_publisher_disabled line. And every flag
// and environment variable of every built-in plan is checked against what 1.6.1 accepts.

afterEach(cleanup);

// The mocker recipe's own model (models/hub in the package, src/plan/embedded-model.ts), served with no Hugging Face cache.
const MODEL = EMBEDDED_MODEL;

/** The structure of a JSON value: object keys (sorted) with their structure, an array's first item, typeof. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? [shape(v[0])] : [];
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, shape((v as Record<string, unknown>)[k])]));
  }
  return v === null ? 'null' : typeof v;
}

/** Endpoint names with their per-worker suffix replaced, so two processes' lists compare. */
const endpointKinds = (body: { instances?: { endpoint: string }[] }) =>
  [...new Set((body.instances ?? []).map((i) => i.endpoint.replace(/_[0-9a-f]+$/, '_<id>')))].sort();

interface Observed {
  health: { status: number; body: any };
  models: any;
  ready: any;
  mockerHealth: { status: number; body: any };
  mockerLog: string;
  disabledLine: string | null;
}

/** `up mocker --detach` (the real venv, or the fakes), then what its frontend and first mocker answer. */
async function observe(home: Home, interpreter: string, extra: string[] = []): Promise<Observed> {
  const base = await portBlock();
  const up = await cli(['up', 'mocker', '--detach', '--no-preflight', '--python', interpreter, ...portSets(base), ...extra], home);
  expect(up.code, up.stdout + up.stderr).toBe(0);
  const url = `http://127.0.0.1:${base}`;
  const get = async (u: string) => {
    const r = await fetch(u);
    const text = await r.text();
    return { status: r.status, body: JSON.parse(text) };
  };
  const health = await get(`${url}/health`);
  const models = (await get(`${url}/v1/models`)).body;
  const ready = (await get(`${url}/v1/models/${encodeURIComponent(MODEL)}/ready`)).body;
  const mockerHealth = await get(`http://127.0.0.1:${base + 1}/health`);
  const disabledLine = extra.length
    ? await until('kv_event_publisher_disabled in the frontend log', () => stripAnsi(logOf(home, 'frontend')).split('\n').find((l) => l.includes('diagnostic_code="kv_event_publisher_disabled"')), 15_000)
    : null;
  const mockerLog = stripAnsi(logOf(home, 'agg-0'));
  await cli(['teardown'], home);
  return { health, models, ready, mockerHealth, mockerLog, disabledLine };
}

const fakeHome = () => realHome({ PYTHONPATH: join(FIXTURES, 'python'), FAKE_ENGINE_MAX_S: '120' });

describe('the fakes answer as the released 1.6.1 frontend and mocker do', () => {
  it('frontend /health, /v1/models, /v1/models/<model>/ready; mocker /health, its engine line and block size', async () => {
    const real = await observe(realHome(), python());
    const fake = await observe(fakeHome(), 'python3');

    // Frontend /health: 200 "healthy", the same keys, the same instance entry keys, the same kinds of endpoints.
    expect(real.health.status).toBe(200);
    expect(fake.health.status).toBe(real.health.status);
    expect(fake.health.body.status).toBe(real.health.body.status);
    expect(shape(fake.health.body)).toEqual(shape(real.health.body));
    expect(endpointKinds(fake.health.body)).toEqual(endpointKinds(real.health.body));
    expect(endpointKinds(real.health.body)).toEqual(['generate', 'worker_kv_query_source_<id>']);

    // /v1/models: the same entry shape and object value.
    expect(shape(fake.models)).toEqual(shape(real.models));
    expect(fake.models.data[0].object).toBe(real.models.data[0].object);

    // /v1/models/<model>/ready: the same structure and counts (two aggregated workers).
    expect(shape(fake.ready)).toEqual(shape(real.ready));
    expect(fake.ready.namespaces.dynamo.worker_types).toEqual(real.ready.namespaces.dynamo.worker_types);
    expect(real.ready.namespaces.dynamo.worker_types).toEqual({ aggregated: { workers: 2, needs: [] } });

    // The mocker's /health never says ready (FACTS §4), in both.
    expect(real.mockerHealth).toMatchObject({ status: 503, body: { status: 'notready', endpoints: { generate: 'ready' } } });
    expect(fake.mockerHealth).toMatchObject({ status: 503, body: { status: 'notready', endpoints: { generate: 'ready' } } });
    expect(shape(fake.mockerHealth.body.uptime)).toEqual(shape(real.mockerHealth.body.uptime));

    // The engine line the live view marks as loading, and the default block size of 64.
    for (const log of [real.mockerLog, fake.mockerLog]) {
      expect(log).toMatch(/ INFO dynamo_llm::mocker: Creating mocker engine with config: MockerConfig \{.*block_size: 64,/);
      expect(log).toContain('Initializing KV event publisher with block_size 64');
    }
  });

  it('the kv_event_publisher_disabled line: the same target, message and fields in the same order', async () => {
    const off = ['--set', 'workers.0.args=["--no-enable-prefix-caching"]'];
    const real = await observe(realHome(), python(), off);
    const fake = await observe(fakeHome(), 'python3', off);
    const parts = (line: string) => {
      const m = /^\S+Z {2}WARN (\S+): (KV-event publishing is disabled for a role that requires KV events) (.*)$/.exec(line);
      expect(m, line).not.toBeNull();
      return { target: m![1], message: m![2], fields: [...m![3].matchAll(/(\w+)=(?:"[^"]*"|\S+)/g)].map((f) => f[1]) };
    };
    const r = parts(real.disabledLine!);
    expect(parts(fake.disabledLine!)).toEqual(r);
    expect(r.fields).toContain('diagnostic_code');
    expect(r.fields).toContain('worker_id');
  });
});

/** The long flags a module's --help lists. */
function helpFlags(module: string): Set<string> {
  const text = execFileSync(python(), ['-m', module, '--help'], { encoding: 'utf8', env: { ...process.env, HF_HUB_OFFLINE: '1' } });
  return new Set([...text.matchAll(/(?<![\w-])--[a-z][\w-]*/g)].map((m) => m[0]));
}

/** Every file of the installed `dynamo` package, as text (Python sources and the compiled runtime). */
function installedDynamo(): Buffer[] {
  const pkg = join(execFileSync(python(), ['-c', 'import dynamo.frontend, os; print(os.path.dirname(os.path.dirname(dynamo.frontend.__file__)))'], { encoding: 'utf8' }).trim());
  const out: Buffer[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.py') || name.endsWith('.so')) out.push(readFileSync(p));
    }
  };
  walk(pkg);
  return out;
}

/**
 * dynamo.vllm needs vLLM, which this tier cannot install: its flags are checked against FACTS §4
 * (vLLM engine flags and Dynamo's own) instead.
 */
const FACTS_VLLM_FLAGS = new Set([
  '--model', '--gpu-memory-utilization', '--max-model-len', '--enforce-eager', '--block-size', '--kv-transfer-config',
  '--kv-events-config', '--disaggregation-mode',
]);
/** Variables read by CUDA, Python and vLLM, not by Dynamo: FACTS §4 names them for the plans. */
const NOT_DYNAMO_ENV = new Set(['PYTHONHASHSEED', 'CUDA_VISIBLE_DEVICES', 'CUDA_DEVICE_ORDER', 'VLLM_NIXL_SIDE_CHANNEL_PORT']);

describe('every flag and environment variable of every built-in plan exists in 1.6.1', () => {
  it('dry-runs of every built-in recipe, planned for the installed 1.6.1, against --help of the real modules and the installed package', async () => {
    const home = realHome();
    const recipes = json<{ recipes: { name: string }[] }>(await cli(['recipes', '--json'], home)).recipes.map((r) => r.name);
    expect(recipes).toEqual(['agg', 'agg-router', 'agg-router-approx', 'disagg-same-gpu', 'mocker']);
    const flags: Record<string, Set<string>> = { 'dynamo.frontend': helpFlags('dynamo.frontend'), 'dynamo.mocker': helpFlags('dynamo.mocker') };
    // Dynamo's own flags of dynamo.vllm are in the installed package (dynamo/vllm/backend_args.py).
    const vllmArgs = readFileSync(join(dirname(execFileSync(python(), ['-c', 'import dynamo.frontend; print(dynamo.frontend.__file__)'], { encoding: 'utf8' }).trim()), '..', 'vllm', 'backend_args.py'), 'utf8');
    expect(vllmArgs).toContain('"--disaggregation-mode"');
    const pkg = installedDynamo();
    const inPackage = (name: string) => pkg.some((b) => b.includes(name));
    const unknown: string[] = [];
    const envSeen = new Set<string>();
    for (const name of recipes) {
      const r = await cli(['up', name, '--dry-run', '--json', '--python', python()], home);
      expect(r.code, r.stderr).toBe(0);
      const plan = json<{ dynamo: { version: string }; processes: { name: string; argv: string[]; env: Record<string, string> }[] }>(r);
      expect(plan.dynamo.version).toBe('1.6.1');
      for (const p of plan.processes) {
        const module = p.argv[2];
        const known = module === 'dynamo.vllm' ? FACTS_VLLM_FLAGS : flags[module];
        for (const f of p.argv.filter((a) => a.startsWith('--'))) if (!known.has(f.split('=')[0])) unknown.push(`${name} ${p.name}: ${f}`);
        for (const k of Object.keys(p.env)) {
          envSeen.add(k);
          if (!NOT_DYNAMO_ENV.has(k) && !inPackage(k)) unknown.push(`${name} ${p.name}: env ${k}`);
        }
      }
    }
    expect(unknown).toEqual([]);
    // The deprecated variable is in no plan: 1.6.1 would log a WARN for it in every worker.
    expect(envSeen.has('DYN_SYSTEM_ENABLED')).toBe(false);
    expect(inPackage('DYN_SYSTEM_ENABLED is deprecated')).toBe(true);
    expect([...envSeen].sort()).toEqual(expect.arrayContaining(['DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS', 'DYN_SYSTEM_PORT', 'VLLM_NIXL_SIDE_CHANNEL_HOST']));
  }, 180_000);
});

describe('the fake dynamo.vllm waits the graceful-shutdown grace as the released 1.6.1 does', () => {
  it('the grace read from DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS: unset, 0, 2.5, negative, invalid', () => {
    const values = ['', '0', '2.5', '-1', 'soon'];
    const asked = (code: string, extraPath: string[] = []) => values.map((v) => Number(execFileSync(python(), ['-c', code], {
      encoding: 'utf8', env: { PATH: process.env.PATH, PYTHONPATH: extraPath.join(':'), DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS: v, PYTHONDONTWRITEBYTECODE: '1' },
    }).trim()));
    // vLLM workers only: dynamo/vllm/main.py shuts down through graceful_shutdown.py.
    const real = asked('from dynamo.common.utils.graceful_shutdown import get_grace_period_seconds as g; print(g())');
    expect(real).toEqual([5, 0, 2.5, 0, 5]);
    const fake = asked('import types; from fake_dynamo_worker import Worker; print(Worker.grace_s(types.SimpleNamespace(kind="vllm")))', [join(FIXTURES, 'python')]);
    expect(fake).toEqual(real);
    const pkg = join(dirname(execFileSync(python(), ['-c', 'import dynamo.frontend; print(dynamo.frontend.__file__)'], { encoding: 'utf8' }).trim()), '..');
    expect(readFileSync(join(pkg, 'vllm', 'main.py'), 'utf8')).toMatch(/graceful_shutdown/);
    // The mocker stops at once (so the fake mocker waits no grace and mocker plans set none).
    expect(readFileSync(join(pkg, 'mocker', 'main.py'), 'utf8')).not.toMatch(/graceful_shutdown_with_discovery|GRACE_PERIOD/);
  });
});
