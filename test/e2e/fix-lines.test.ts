import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { cacheQwen3 } from '../helpers/runs.js';
import { fakeFacts, healthyGpu } from '../helpers/facts.js';
import { loadRecipe } from '../../src/host/files/recipes.js';
import { buildPlan, planPorts } from '../../src/plan/build.js';
import { ALL_CHECKS, selectChecks } from '../../src/doctor/registry.js';
import { EXIT_SIGNATURE, SIGNATURES } from '../../src/diagnose/signatures.js';
import { scanPaths } from '../../src/host/logs/log-scan.js';
import type { Check, LogSet, RunView } from '../../src/doctor/types.js';
import type { GpuFacts } from '../../src/host/types.js';
import type { Recipe } from '../../src/recipe/schema.js';
import type { RunRecord } from '../../src/run/types.js';

// Every `fix:` line that suggests `--set` or a dynamo-dev flag must be a command that works for the
// recipe it was given for: each suggestion goes through `up RECIPE --dry-run` of the built CLI.
// The fixes come from the signature table and from the checks failing the real ways on each
// built-in recipe; a flag nobody classified fails the test (a new fix must say whose flag it is).

const RECIPES = ['agg', 'agg-router', 'agg-router-approx', 'disagg-same-gpu', 'mocker'];
/** Flags of `dynamo-dev up` (and the global ones) that take a value. */
const UP_VALUE_FLAGS = new Set(['--set', '--python', '--model', '--ready-timeout', '--grace', '--state-dir']);
const UP_BOOL_FLAGS = new Set(['--dry-run', '--detach', '--no-preflight', '--script', '--json', '--no-color']);
/** Flags of the engine's and frontend's own command lines, named as such in fix lines (not dynamo-dev's). */
const ENGINE_FLAGS = new Set(['--kv-events-config', '--no-router-kv-events']);
/** Flags of other dynamo-dev commands (`doctor --only`, `teardown --orphans`...) appear inside backticked commands. */
const OTHER_COMMAND_FLAGS = new Set(['--only', '--orphans', '--run', '--lines', '--gpu-mib', '--fraction', '--dry-run']);
// Flags of other tools a fix names: docker run's --gpus (gpu.not-visible).
const OTHER_TOOL_FLAGS = new Set(['--gpus']);

const home = tempHome('dd-fix-lines-');
afterAll(() => home.cleanup());

/** The up arguments a fix suggests, and the flags in it that are nobody's. */
function suggestions(fix: string): { args: string[]; unknown: string[] } {
  const args: string[] = [];
  const unknown: string[] = [];
  const tokens = fix.replace(/[`'"(),;]/g, ' ').split(/\s+/).filter(Boolean);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (!t.startsWith('--')) continue;
    const flag = t.includes('=') && !t.startsWith('--set') ? t.slice(0, t.indexOf('=')) : t;
    if (UP_VALUE_FLAGS.has(flag)) {
      const value = tokens[i + 1];
      if (value && !value.startsWith('--')) args.push(flag, value.replace(/[.:]$/, ''));
      i++;
    } else if (UP_BOOL_FLAGS.has(flag)) {
      if (flag === '--no-preflight') args.push(flag);
    } else if (!ENGINE_FLAGS.has(flag) && !OTHER_COMMAND_FLAGS.has(flag) && !OTHER_TOOL_FLAGS.has(flag)) {
      unknown.push(flag);
    }
  }
  return { args, unknown };
}

/** `dynamo-dev doctor --only a,b` in a fix names real check ids. */
function onlyIds(fix: string): string[] {
  return [...fix.matchAll(/--only\s+([\w.,-]+)/g)].flatMap((m) => m[1].split(',').filter(Boolean));
}

const gpuWithFree = (free: number): GpuFacts => ({ ...healthyGpu, gpus: healthyGpu.ok ? healthyGpu.gpus.map((g) => ({ ...g, memoryFreeMiB: free })) : [] } as GpuFacts);
const run = async (check: Check, facts: ReturnType<typeof fakeFacts>) => (await check.run(facts)).fix;
const byId = (id: string) => ALL_CHECKS.find((c) => c.id === id)!;

/** The fixes the checks give when they fail the real ways on a recipe. */
async function checkFixes(name: string, recipe: Recipe): Promise<string[]> {
  const plan = buildPlan({ recipe, runDir: join(home.dir, 'runs', name), gpuTotalMiB: 8188 });
  const o = { recipe, plan };
  const fixes: (string | null)[] = [];
  // Too little free memory for the plan.
  fixes.push(await run(byId('gpu.memory'), fakeFacts({ gpu: gpuWithFree(3000) }, o)));
  // Every port of the plan taken.
  const ports = planPorts(plan).map((p) => ({ name: p.name, port: p.port, free: false, holderPid: 4321, holderCmd: 'python3 -m http.server' }));
  fixes.push(await run(byId('ports.free'), fakeFacts({ ports }, o)));
  // An interpreter without the engine.
  fixes.push(await run(byId('python.env'), fakeFacts({
    python: { interpreter: '/usr/bin/python3', ok: true, error: null, pythonVersion: '3.12.3', torchCuda: null, modules: { dynamo: { ok: false, version: null, error: "No module named 'dynamo'" } } },
  }, o)));
  // A worker with fewer KV tokens than maxModelLen, in a run of this recipe.
  const workers = plan.processes.filter((p) => p.role !== 'frontend');
  if (recipe.engine === 'vllm') {
    const logs: Record<string, string> = {};
    workers.forEach((w, i) => {
      logs[w.name] = join(home.dir, `${name}-${w.name}.log`);
      writeFileSync(logs[w.name], `(EngineCore pid=1) INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: ${i === workers.length - 1 ? '2,048' : '14,816'} tokens\n`);
    });
    const record = {
      id: `r-${name}`, recipe: name, recipeSpec: recipe, model: plan.model, createdAt: '', updatedAt: '', state: 'ready', frontendUrl: plan.frontendUrl, plan,
      supervisor: { pid: 1, startTicks: 1, detached: true },
      processes: plan.processes.map((p) => ({ name: p.name, role: p.role, pid: null, pgid: null, startTicks: null, startedAt: null, argv: p.argv, env: p.env, ports: p.ports,
        gpuMemoryUtilization: p.gpuMemoryUtilization, state: 'ready', kvTokens: null, exitCode: null, signal: null, log: logs[p.name] ?? '/nonexistent.log', descendants: [] })),
    } as RunRecord;
    const view: RunView = { record, status: 'ready', live: false, pids: [], lost: [], logsDir: home.dir };
    const files = record.processes.map((p) => ({ path: p.log, process: p.name, role: p.role }));
    const logSet: LogSet = { source: 'run', label: record.id, files, scan: await scanPaths(files.map((f) => f.path), { missingOk: true }) };
    fixes.push(await run(byId('kv.allocated'), fakeFacts({ run: view, logs: logSet }, o)));
  }
  // A live run whose frontend counts one worker fewer than planned, lists no model, or says not_ready.
  {
    const record = {
      id: `live-${name}`, recipe: name, recipeSpec: recipe, model: plan.model, createdAt: '', updatedAt: '', state: 'ready', frontendUrl: plan.frontendUrl, plan,
      supervisor: { pid: 1, startTicks: 1, detached: true }, processes: [],
    } as unknown as RunRecord;
    const liveRun: RunView = { record, status: 'ready', live: true, pids: [], lost: [], logsDir: home.dir };
    const planned = plan.processes.filter((p) => p.role !== 'frontend').length;
    const probe = (url: string, status: number, body: unknown) => ({ url, ok: status < 400, status, body, error: null });
    const instances = (n: number) => Array.from({ length: n }, (_, i) => ({ component: 'backend', endpoint: 'generate', instance_id: i, namespace: 'dynamo' }));
    const frontend = (health: unknown, ids: string[]) => ({
      url: plan.frontendUrl, health: probe(`${plan.frontendUrl}/health`, 200, health), models: probe(`${plan.frontendUrl}/v1/models`, 200, { data: ids.map((id) => ({ id })) }), modelIds: ids, modelReady: null,
    });
    for (const fe of [
      frontend({ status: 'healthy', instances: instances(planned - 1) }, [plan.model]),
      frontend({ status: 'healthy', instances: instances(planned) }, []),
      frontend({ status: 'not_ready', message: 'discovery' }, []),
    ]) fixes.push(await run(byId('frontend.models'), fakeFacts({ run: liveRun, frontend: fe }, o)));
    // The unlisted model's fix names the flag (`--model`): it goes through the dry run below.
    expect(fixes.at(-2)).toContain(`--model ${plan.model}`);
  }
  // Workers that publish no KV events to a KV router with events.
  if (plan.router.mode === 'kv' && plan.router.kvEvents && recipe.engine === 'vllm') {
    const silent = { ...plan, processes: plan.processes.map((p) => ({ ...p, argv: p.argv.filter((a) => !a.includes('enable_kv_cache_events') && a !== '--kv-events-config') })) };
    fixes.push(await run(byId('kv.events'), fakeFacts({}, { recipe, plan: silent })));
  }
  return fixes.filter((f): f is string => f !== null);
}

// Each distinct (recipe, arguments) runs once, at most three at a time (2 cores; CLI start-up dominates).
const memo = new Map<string, Promise<{ code: number; stderr: string }>>();
let running = 0;
const queue: (() => void)[] = [];
async function slot<T>(f: () => Promise<T>): Promise<T> {
  if (running >= 3) await new Promise<void>((r) => queue.push(r));
  running++;
  try {
    return await f();
  } finally {
    running--;
    queue.shift()?.();
  }
}
/** `gpu`: with the fake nvidia-smi, so the plan knows the GPU's size (KV estimates need it and a cached model). */
function dryRun(recipe: string, args: string[], gpu = false): Promise<{ code: number; stderr: string }> {
  const key = JSON.stringify([recipe, args, gpu]);
  if (!memo.has(key)) {
    memo.set(key, slot(async () => {
      const r = await runCli(['up', recipe, '--dry-run', '--json', ...args], fakeEnv(home, gpu ? { gpu: 'laptop-570' } : {}));
      return { code: r.code, stderr: r.stderr };
    }));
  }
  return memo.get(key)!;
}

describe('every fix line works for its recipe', () => {
  it('the signature table: each --set suggestion is accepted by up --dry-run of every vLLM recipe; no flag is nobody\'s', async () => {
    const fixes = [...SIGNATURES, EXIT_SIGNATURE].map((s) => [s.code, s.fix] as const);
    const tried: string[] = [];
    for (const [code, fix] of fixes) {
      const { args, unknown } = suggestions(fix);
      expect(unknown, `${code}: ${fix}`).toEqual([]);
      for (const id of onlyIds(fix)) expect(() => selectChecks({ only: [id] }), `${code}: --only ${id}`).not.toThrow();
      if (args.length === 0) continue;
      // Each suggestion alone (a fix offers alternatives: "--set A or --set B"), on every vLLM recipe.
      const runs = RECIPES.filter((r) => r !== 'mocker').flatMap((recipe) =>
        Array.from({ length: args.length / 2 }, (_, i) => args.slice(2 * i, 2 * i + 2)).map(async (pair) => {
          const r = await dryRun(recipe, pair);
          expect(r.code, `${code} on ${recipe}: ${pair.join(' ')}\n${r.stderr}`).toBe(0);
          tried.push(`${code}:${recipe}`);
        }));
      await Promise.all(runs);
    }
    // The table does suggest settings (cuda.oom, vllm.free-memory, vllm.no-kv-memory, dynamo.kv-events-disabled, python.missing-module).
    expect(new Set(tried.map((t) => t.split(':')[0]))).toEqual(new Set(['cuda.oom', 'vllm.free-memory', 'vllm.no-kv-memory', 'dynamo.kv-events-disabled', 'python.missing-module']));
  }, 120_000);

  it.each(RECIPES)('the checks failing on %s: each suggested --set / flag is accepted by up --dry-run of that recipe', async (name) => {
    const recipe = await loadRecipe(name);
    const fixes = await checkFixes(name, recipe);
    const withArgs = fixes.map((f) => ({ fix: f, ...suggestions(f) })).filter((x) => x.args.length > 0 || x.unknown.length > 0);
    expect(withArgs.length).toBeGreaterThanOrEqual(recipe.engine === 'vllm' ? 3 : 2);
    for (const { fix, args, unknown } of withArgs) {
      expect(unknown, fix).toEqual([]);
      for (const id of onlyIds(fix)) expect(() => selectChecks({ only: [id] }), fix).not.toThrow();
      // The --set lines of one fix go together (gpu.memory scales every worker at once) unless they
      // are alternatives ("raise ... or lower ..."): together, else each alone.
      const together = await dryRun(name, args);
      if (together.code === 0) continue;
      const alone = await Promise.all(Array.from({ length: args.length / 2 }, (_, i) => dryRun(name, args.slice(2 * i, 2 * i + 2))));
      expect(alone.every((r) => r.code === 0), `${name}: ${fix}\n${together.stderr}${alone.map((r) => r.stderr).join('')}`).toBe(true);
    }
  }, 120_000);

  it('the plan error for a fraction too small for maxModelLen: its fix, applied, gives a plan that fits', async () => {
    cacheQwen3(home.hfCache);
    const cases = [['agg-router', 'workers.0.gpuMemoryUtilization=0.2'], ['disagg-same-gpu', 'workers.1.gpuMemoryUtilization=0.2'], ['agg', 'maxModelLen=32768']];
    await Promise.all(cases.map(async ([recipe, set]) => {
      const bad = await dryRun(recipe, ['--set', set], true);
      expect(bad.code, bad.stderr).toBe(2);
      const fix = /^fix: (.*)$/m.exec(bad.stderr)?.[1] ?? '';
      const { args, unknown } = suggestions(fix);
      expect(unknown).toEqual([]);
      expect(args.length, fix).toBeGreaterThan(0);
      await Promise.all(Array.from({ length: args.length / 2 }, (_, i) => args.slice(2 * i, 2 * i + 2)).map(async (pair) => {
        const good = await dryRun(recipe, ['--set', set, ...pair], true);
        expect(good.code, `${recipe} --set ${set} ${pair.join(' ')}: ${good.stderr}`).toBe(0);
      }));
    }));
  }, 60_000);
});
