import { describe, expect, it } from 'vitest';
import { loadRecipe } from '../../../src/host/files/recipes.js';
import { buildPlan, planPorts, resolveFractions } from '../../../src/plan/build.js';
import { validateRecipe } from '../../../src/recipe/load.js';
import { UserError } from '../../../src/errors.js';
import { KV_LINE_PATTERN, REGISTERED_LINE } from '../../../src/plan/types.js';
import { EMBEDDED_HUB_CACHE, EMBEDDED_MODEL, EMBEDDED_MODEL_DIR } from '../../../src/plan/embedded-model.js';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../../helpers/cli.js';

const RUN = '/state/runs/r1';
const QWEN = { bytesPerToken: 114_688, weightsMiB: 1145 };
const plan = async (name: string, sets: string[] = [], extra: Partial<Parameters<typeof buildPlan>[0]> = {}) =>
  buildPlan({ recipe: await loadRecipe(name, sets), runDir: RUN, gpuTotalMiB: 8188, ...extra });
const proc = (p: Awaited<ReturnType<typeof plan>>, name: string) => p.processes.find((x) => x.name === name)!;

const FILE_ENV = {
  PYTHONHASHSEED: '0',
  DYN_DISCOVERY_BACKEND: 'file',
  DYN_FILE_KV: `${RUN}/discovery`,
  DYN_EVENT_PLANE: 'zmq',
  DYN_REQUEST_PLANE: 'tcp',
};

describe('buildPlan: built-in recipes', () => {
  it('agg: one worker behind a round-robin frontend with file discovery', async () => {
    const p = await plan('agg');
    expect(p.processes.map((x) => x.name)).toEqual(['frontend', 'agg-0']);
    expect(proc(p, 'frontend').argv).toEqual(['python3', '-m', 'dynamo.frontend', '--http-port', '8000', '--router-mode', 'round-robin', '--discovery-backend', 'file']);
    expect(proc(p, 'frontend').env).toEqual(FILE_ENV);
    // Ready once the model is listed, its /ready (1.6+) counts the worker, and a completion is answered.
    expect(proc(p, 'frontend').ready).toEqual({
      http: 'http://127.0.0.1:8000/v1/models', modelReady: 'http://127.0.0.1:8000/v1/models/Qwen%2FQwen3-0.6B/ready', workers: 1, completion: true,
    });
    expect(proc(p, 'agg-0').argv).toEqual([
      'python3', '-m', 'dynamo.vllm', '--model', 'Qwen/Qwen3-0.6B', '--gpu-memory-utilization', '0.38', '--max-model-len', '4096', '--enforce-eager',
    ]);
    // No DYN_SYSTEM_ENABLED (deprecated since 0.7: a WARN in every worker log); no 5 s grace at stop.
    expect(proc(p, 'agg-0').env).toEqual({
      ...FILE_ENV, CUDA_DEVICE_ORDER: 'PCI_BUS_ID', CUDA_VISIBLE_DEVICES: '0', DYN_SYSTEM_PORT: '8081', DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS: '0',
    });
    expect(proc(p, 'agg-0').blockSize).toBe(16);
    // No interpreter was asked: the plan says it assumed the verified release.
    expect(p.dynamo).toEqual({ version: null, plannedFor: '1.6.1', assumed: true });
    expect(proc(p, 'agg-0').ready).toEqual({ logPattern: KV_LINE_PATTERN, http: 'http://127.0.0.1:8081/health', registeredLine: REGISTERED_LINE });
    expect(p.budget).toEqual({ fractionSum: 0.38, limit: 0.9, budgetMiB: 3112 });
  });

  it('agg-router: two publishing workers, distinct system ports and KV-event endpoints, sequential start', async () => {
    const p = await plan('agg-router');
    expect(proc(p, 'frontend').argv).toEqual(['python3', '-m', 'dynamo.frontend', '--http-port', '8000', '--router-mode', 'kv', '--discovery-backend', 'file']);
    const [a, b] = [proc(p, 'agg-0'), proc(p, 'agg-1')];
    expect(a.argv.slice(-2)).toEqual(['--kv-events-config', '{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:20080","enable_kv_cache_events":true}']);
    expect(b.argv.slice(-2)).toEqual(['--kv-events-config', '{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:20081","enable_kv_cache_events":true}']);
    expect([a.env.DYN_SYSTEM_PORT, b.env.DYN_SYSTEM_PORT]).toEqual(['8081', '8082']);
    expect([a.ports, b.ports]).toEqual([{ system: 8081, kvEvents: 20080 }, { system: 8082, kvEvents: 20081 }]);
    expect([a.publishesKvEvents, b.publishesKvEvents]).toEqual([true, true]);
    expect([a.waitFor, b.waitFor]).toEqual([[], ['agg-0']]);
    expect(p.budget.fractionSum).toBe(0.76);
  });

  it('agg-router-approx: --no-router-kv-events and no worker publishes', async () => {
    const p = await plan('agg-router-approx');
    expect(proc(p, 'frontend').argv).toContain('--no-router-kv-events');
    for (const w of ['agg-0', 'agg-1']) {
      expect(proc(p, w).argv).not.toContain('--kv-events-config');
      expect(proc(p, w).publishesKvEvents).toBe(false);
      expect(proc(p, w).ports.kvEvents).toBeUndefined();
    }
  });

  it('disagg-same-gpu: decode first, prefill after its KV line; NIXL config, own side-channel and system ports; only prefill publishes', async () => {
    const p = await plan('disagg-same-gpu');
    expect(p.disaggregated).toBe(true);
    expect(p.processes.map((x) => x.name)).toEqual(['frontend', 'decode-0', 'prefill-0']);
    const [d, pf] = [proc(p, 'decode-0'), proc(p, 'prefill-0')];
    const nixl = '{"kv_connector":"NixlConnector","kv_role":"kv_both"}';
    expect(d.argv).toEqual([
      'python3', '-m', 'dynamo.vllm', '--model', 'Qwen/Qwen3-0.6B', '--gpu-memory-utilization', '0.38', '--max-model-len', '4096', '--enforce-eager',
      '--disaggregation-mode', 'decode', '--kv-transfer-config', nixl,
    ]);
    expect(pf.argv).toEqual([
      'python3', '-m', 'dynamo.vllm', '--model', 'Qwen/Qwen3-0.6B', '--gpu-memory-utilization', '0.38', '--max-model-len', '4096', '--enforce-eager',
      '--disaggregation-mode', 'prefill', '--kv-transfer-config', nixl,
      '--kv-events-config', '{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:20080","enable_kv_cache_events":true}',
    ]);
    expect(d.env).toMatchObject({ DYN_SYSTEM_PORT: '8081', VLLM_NIXL_SIDE_CHANNEL_PORT: '20097', CUDA_DEVICE_ORDER: 'PCI_BUS_ID', CUDA_VISIBLE_DEVICES: '0', PYTHONHASHSEED: '0' });
    expect(pf.env).toMatchObject({ DYN_SYSTEM_PORT: '8082', VLLM_NIXL_SIDE_CHANNEL_PORT: '20098' });
    // A host without a routable address still gets a side channel: loopback, kept as given by Dynamo.
    expect([d.env.VLLM_NIXL_SIDE_CHANNEL_HOST, pf.env.VLLM_NIXL_SIDE_CHANNEL_HOST]).toEqual(['127.0.0.1', '127.0.0.1']);
    expect(d.ports).toEqual({ system: 8081, nixlSideChannel: 20097 });
    expect(pf.ports).toEqual({ system: 8082, nixlSideChannel: 20098, kvEvents: 20080 });
    expect([d.publishesKvEvents, pf.publishesKvEvents]).toEqual([false, true]);
    expect([d.waitFor, pf.waitFor]).toEqual([[], ['decode-0']]);
  });

  it('mocker: --model-path and --model-name, no GPU fraction or budget, ready through the frontend, workers start together', async () => {
    const p = await plan('mocker', ['model=Qwen/Qwen3-0.6B'], { model: QWEN });
    const w = proc(p, 'agg-0');
    expect(w.argv).toEqual(['python3', '-m', 'dynamo.mocker', '--model-path', 'Qwen/Qwen3-0.6B', '--model-name', 'Qwen/Qwen3-0.6B']);
    expect(w.gpuMemoryUtilization).toBeNull();
    expect(w.kvTokensEstimate).toBeNull();
    // Its /health stays "notready" (FACTS §4): the frontend decides, counting both workers.
    expect(w.ready).toEqual({ viaFrontend: true });
    expect(proc(p, 'frontend').ready).toMatchObject({ workers: 2, completion: true });
    expect(w.env.DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS).toBeUndefined();
    expect(w.blockSize).toBe(64);
    expect(w.publishesKvEvents).toBe(true);
    expect(proc(p, 'agg-1').waitFor).toEqual([]);
    expect(p.budget.fractionSum).toBe(0);
    expect(p.budget.budgetMiB).toBeNull();
  });

  it('the interpreter override replaces argv[0]; --set moves every port', async () => {
    const p = await plan('agg-router', ['frontend.httpPort=9100', 'ports.system=9200', 'ports.kvEvents=9300'], { python: '/venv/bin/python' });
    expect(p.processes.every((x) => x.argv[0] === '/venv/bin/python')).toBe(true);
    expect(planPorts(p).map((x) => `${x.name}=${x.port}`)).toEqual([
      'frontend.http=9100', 'agg-0.system=9200', 'agg-0.kvEvents=9300', 'agg-1.system=9201', 'agg-1.kvEvents=9301',
    ]);
    expect(p.frontendUrl).toBe('http://127.0.0.1:9100');
  });
});

describe('buildPlan: the embedded model', () => {
  const SNAPSHOT = join(ROOT, 'models', 'hub', 'models--dynamo-dev--tiny', 'snapshots', '0'.repeat(40));

  it('the mocker recipe serves dynamo-dev/tiny from the package\'s snapshot folder, listed under its id; its readiness asks /v1/models/dynamo-dev%2Ftiny/ready', async () => {
    const p = await plan('mocker');
    expect(p.model).toBe(EMBEDDED_MODEL);
    expect(proc(p, 'agg-0').argv).toEqual(['python3', '-m', 'dynamo.mocker', '--model-path', SNAPSHOT, '--model-name', 'dynamo-dev/tiny']);
    expect(proc(p, 'frontend').ready.modelReady).toBe('http://127.0.0.1:8000/v1/models/dynamo-dev%2Ftiny/ready');
  });

  it('a frontend before 1.4 (which reads the files by the served name from its Hugging Face cache) gets the package\'s cache; 1.4.0 on, and other models, do not', async () => {
    const env = async (version: string, sets: string[] = []) => proc(await plan('mocker', sets, { dynamoVersion: version }), 'frontend').env.HF_HUB_CACHE;
    expect(await env('1.3.1')).toBe(join(ROOT, 'models', 'hub'));
    expect(await env('1.3.0.post1')).toBe(EMBEDDED_HUB_CACHE);
    expect(await env('1.4.0')).toBeUndefined();
    expect(await env('1.6.1')).toBeUndefined();
    expect(await env('1.3.1', ['model=Qwen/Qwen3-0.6B'])).toBeUndefined();
    // A recipe's own frontend env still wins; the workers never get it (they read the folder).
    expect(await env('1.3.1', ['frontend.env={"HF_HUB_CACHE":"/mine"}'])).toBe('/mine');
    expect(proc(await plan('mocker', [], { dynamoVersion: '1.3.1' }), 'agg-0').env.HF_HUB_CACHE).toBeUndefined();
  });

  it('the package holds it as a Hugging Face cache entry: refs/main names the snapshot the mocker reads', () => {
    const repo = join(EMBEDDED_HUB_CACHE, 'models--dynamo-dev--tiny');
    expect(readFileSync(join(repo, 'refs', 'main'), 'utf8')).toBe('0'.repeat(40));
    expect(join(repo, 'snapshots', '0'.repeat(40))).toBe(EMBEDDED_MODEL_DIR);
    expect(EMBEDDED_MODEL_DIR).toBe(SNAPSHOT);
  });

  it('the folder holds what the frontend needs: a config with a real model_type, a tokenizer, a chat template; no weights; under 300 KB', () => {
    const files = readdirSync(EMBEDDED_MODEL_DIR).sort();
    expect(files).toEqual(['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json']);
    expect(JSON.parse(readFileSync(join(EMBEDDED_MODEL_DIR, 'config.json'), 'utf8')).model_type).toBe('qwen3');
    expect(JSON.parse(readFileSync(join(EMBEDDED_MODEL_DIR, 'tokenizer_config.json'), 'utf8')).chat_template).toContain('add_generation_prompt');
    expect(files.reduce((n, f) => n + statSync(join(EMBEDDED_MODEL_DIR, f)).size, 0)).toBeLessThan(300_000);
  });

  it('a vLLM recipe cannot serve it (no weights): exit 2 naming the model and what to do', async () => {
    await expect(plan('agg', [`model=${EMBEDDED_MODEL}`])).rejects.toThrow(/agg \(built-in\)|model: dynamo-dev\/tiny is dynamo-dev's embedded tokenizer-only model \(no weights\): only the mocker engine serves it/);
    await expect(plan('agg', [`model=${EMBEDDED_MODEL}`])).rejects.toThrow(UserError);
  });
});

describe('buildPlan: the mocker', () => {
  it('block size from --block-size; no KV events without prefix caching', async () => {
    const p = await plan('mocker', ['workers.0.args=["--block-size", "32", "--no-enable-prefix-caching"]']);
    expect(proc(p, 'agg-0').blockSize).toBe(32);
    expect(proc(p, 'agg-0').publishesKvEvents).toBe(false);
    expect(proc(p, 'agg-0').argv.slice(-3)).toEqual(['--block-size', '32', '--no-enable-prefix-caching']);
  });

  it('a local model folder: served under its path, readiness without the /ready sub-resource (404 for such ids)', async () => {
    const p = await plan('mocker', ['model=/models/tiny']);
    expect(proc(p, 'agg-0').argv).toContain('/models/tiny');
    expect(proc(p, 'frontend').ready.modelReady).toBeUndefined();
    expect(proc(p, 'frontend').ready.workers).toBe(2);
  });
});

describe('buildPlan: plans follow the installed Dynamo release', () => {
  it('1.6.1 (verified): the plan records the version and is the default plan', async () => {
    const p = await plan('agg-router-approx', [], { dynamoVersion: '1.6.1' });
    expect(p.dynamo).toEqual({ version: '1.6.1', plannedFor: '1.6.1', assumed: false });
    expect(p.processes).toEqual((await plan('agg-router-approx')).processes);
  });

  it('1.2.1: no /ready sub-resource (readiness counts workers in /health); 1.3.0 has it', async () => {
    const with13 = await plan('agg', [], { dynamoVersion: '1.3.0.post1' });
    expect(proc(with13, 'frontend').ready.modelReady).toBe('http://127.0.0.1:8000/v1/models/Qwen%2FQwen3-0.6B/ready');
    const p = await plan('agg', [], { dynamoVersion: '1.2.1' });
    expect(proc(p, 'frontend').ready).toEqual({ http: 'http://127.0.0.1:8000/v1/models', workers: 1, completion: true });
  });

  it('1.0.x: new flag names, but dynamo.vllm still publishes KV events by default: each worker its own DYN_VLLM_KV_EVENT_PORT', async () => {
    const p = await plan('agg-router-approx', [], { dynamoVersion: '1.0.2' });
    expect(proc(p, 'frontend').argv).toEqual([
      'python3', '-m', 'dynamo.frontend', '--http-port', '8000', '--router-mode', 'kv', '--no-router-kv-events', '--discovery-backend', 'file',
    ]);
    expect([proc(p, 'agg-0').env.DYN_VLLM_KV_EVENT_PORT, proc(p, 'agg-1').env.DYN_VLLM_KV_EVENT_PORT]).toEqual(['20080', '20081']);
    expect([proc(p, 'agg-0').ports.kvEvents, proc(p, 'agg-1').ports.kvEvents]).toEqual([20080, 20081]);
    expect(proc(p, 'agg-0').publishesKvEvents).toBe(true);
    expect(proc(p, 'agg-0').env.DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS).toBe('0');
  });

  it('0.9.x: --store-kv / DYN_STORE_KV, --no-kv-events, --is-prefill-worker / --is-decode-worker, no grace variable', async () => {
    const p = await plan('disagg-same-gpu', ['frontend.kvEvents=false'], { dynamoVersion: '0.9.0' });
    const fe = proc(p, 'frontend');
    expect(fe.argv.slice(5)).toEqual(['--router-mode', 'kv', '--no-kv-events', '--store-kv', 'file']);
    expect(fe.env.DYN_STORE_KV).toBe('file');
    expect(fe.env.DYN_DISCOVERY_BACKEND).toBeUndefined();
    expect(proc(p, 'decode-0').argv).toContain('--is-decode-worker');
    expect(proc(p, 'prefill-0').argv).toContain('--is-prefill-worker');
    expect(proc(p, 'prefill-0').argv).not.toContain('--disaggregation-mode');
    // The prefill worker publishes by default in this release; decode never does.
    expect(proc(p, 'prefill-0').env.DYN_VLLM_KV_EVENT_PORT).toBe('20080');
    expect(proc(p, 'decode-0').env.DYN_VLLM_KV_EVENT_PORT).toBeUndefined();
    expect(proc(p, 'prefill-0').env.DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS).toBeUndefined();
  });

  it('before 0.7: workers need DYN_SYSTEM_ENABLED=true to serve /health', async () => {
    const p = await plan('agg', [], { dynamoVersion: '0.6.1' });
    expect(proc(p, 'agg-0').env.DYN_SYSTEM_ENABLED).toBe('true');
    expect(proc(await plan('agg', [], { dynamoVersion: '0.7.0' }), 'agg-0').env.DYN_SYSTEM_ENABLED).toBeUndefined();
  });

  it('an unreadable version plans for the verified release and says so', async () => {
    const p = await plan('agg', [], { dynamoVersion: 'garbage' });
    expect(p.dynamo).toEqual({ version: 'garbage', plannedFor: '1.6.1', assumed: true });
  });
});

describe('system ports', () => {
  it('the last worker\'s system port may be 32767 and no more (Dynamo reads it as a signed 16-bit number)', async () => {
    expect(proc(await plan('mocker', ['ports.system=32766']), 'agg-1').env.DYN_SYSTEM_PORT).toBe('32767');
    await expect(plan('mocker', ['ports.system=32767'])).rejects.toThrow(
      'ports.system: 2 workers take system ports 32767-32768, past 32767; Dynamo reads DYN_SYSTEM_PORT as a signed 16-bit number, so set ports.system to at most 32766',
    );
  });
});

describe('fractions and memory fitting', () => {
  const recipe = (workers: unknown[], extra: Record<string, unknown> = {}) => validateRecipe({ name: 't', workers, ...extra }, 't');

  it('"auto" splits what the limit leaves evenly (floored to 2 decimals)', () => {
    const r = resolveFractions(recipe([{ role: 'agg', replicas: 3, gpuMemoryUtilization: 'auto' }]));
    expect(r.map((w) => w.fraction)).toEqual([0.3, 0.3, 0.3]);
    const mixed = resolveFractions(recipe([{ role: 'decode', gpuMemoryUtilization: 0.5 }, { role: 'prefill', gpuMemoryUtilization: 'auto' }]));
    expect(mixed.map((w) => [w.name, w.fraction])).toEqual([['decode-0', 0.5], ['prefill-0', 0.4]]);
  });

  it('fractions over the limit: UserError with the numbers', () => {
    const r = recipe([{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.5 }]);
    expect(() => buildPlan({ recipe: r, runDir: RUN })).toThrow(UserError);
    expect(() => buildPlan({ recipe: r, runDir: RUN })).toThrow(/add up to 1 \(agg-0 0.5 \+ agg-1 0.5\), over memory.limit 0.9/);
  });

  it('estimates each worker\'s KV tokens from the cached model: (fraction x total - weights - overhead) / bytes per token', async () => {
    const p = await plan('agg-router', [], { model: QWEN });
    // 8188 x 0.38 = 3111.44 MiB - 1145 weights - 400 overhead = 1566.44 MiB / 114,688 B = 14,321 tokens
    expect(proc(p, 'agg-0').kvTokensEstimate).toBe(14_321);
    expect(proc(p, 'frontend').kvTokensEstimate).toBeNull();
  });

  it('no estimate without the GPU total or the model config', async () => {
    expect(proc(await plan('agg', [], { gpuTotalMiB: null, model: QWEN }), 'agg-0').kvTokensEstimate).toBeNull();
    expect(proc(await plan('agg'), 'agg-0').kvTokensEstimate).toBeNull();
  });

  it('a worker whose KV would hold less than maxModelLen: UserError (exit 2) naming it, with the numbers', async () => {
    const run = () => plan('agg-router', ['workers.0.gpuMemoryUtilization=0.2'], { model: QWEN });
    await expect(run()).rejects.toThrow(UserError);
    // 8188 x 0.2 = 1637.6 MiB - 1145 - 400 = 92.6 MiB / 114,688 B = 846 tokens
    await expect(run()).rejects.toThrow(
      'agg-0 at gpuMemoryUtilization 0.2 gets ~1638 MiB of 8188 MiB; after weights (~1145 MiB) and overhead (~400 MiB) that leaves ~93 MiB = ~846 KV tokens at 114,688 bytes/token, fewer than maxModelLen 4096',
    );
  });

  it('a disaggregated recipe needs both roles; agg and prefill/decode do not mix', () => {
    expect(() => buildPlan({ recipe: recipe([{ role: 'prefill', gpuMemoryUtilization: 0.4 }]), runDir: RUN })).toThrow(/at least one "prefill" and one "decode"/);
    expect(() => buildPlan({ recipe: recipe([{ role: 'agg', gpuMemoryUtilization: 0.3 }, { role: 'decode', gpuMemoryUtilization: 0.3 }]), runDir: RUN })).toThrow(/mixes "agg"/);
  });

  it('two processes on one port: UserError naming both', () => {
    const r = recipe([{ role: 'agg', gpuMemoryUtilization: 0.3 }], { frontend: { httpPort: 8081 } });
    expect(() => buildPlan({ recipe: r, runDir: RUN })).toThrow(/agg-0.system and frontend.http would both use port 8081/);
  });

  it('etcd discovery: no per-run DYN_FILE_KV, backend named in the env', () => {
    const p = buildPlan({ recipe: recipe([{ role: 'agg', gpuMemoryUtilization: 0.3 }], { discovery: 'etcd' }), runDir: RUN });
    expect(p.processes[0].env.DYN_FILE_KV).toBeUndefined();
    expect(p.processes[0].env.DYN_DISCOVERY_BACKEND).toBe('etcd');
    expect(p.processes[0].argv).not.toContain('--discovery-backend');
  });

  it('a recipe with its own env: still PYTHONHASHSEED=0 on every worker (KV event ids), unless it sets another', () => {
    const own = buildPlan({ recipe: recipe([{ role: 'agg', replicas: 2, gpuMemoryUtilization: 0.3 }], { env: { HF_HUB_OFFLINE: '1' } }), runDir: RUN });
    for (const w of own.processes.slice(1)) expect(w.env).toMatchObject({ PYTHONHASHSEED: '0', HF_HUB_OFFLINE: '1' });
    const seeded = buildPlan({ recipe: recipe([{ role: 'agg', gpuMemoryUtilization: 0.3 }], { env: { PYTHONHASHSEED: '7' } }), runDir: RUN });
    expect(seeded.processes[1].env.PYTHONHASHSEED).toBe('7');
  });
});
