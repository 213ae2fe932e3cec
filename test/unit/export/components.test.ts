import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { UserError } from '../../../src/errors.js';
import { planToComponents, type ExportInput } from '../../../src/export/components.js';
import { localEnvReason } from '../../../src/export/local-only.js';
import { formatNote } from '../../../src/export/notes.js';
import { render } from '../../../src/export/render.js';
import { headerLines, toYaml } from '../../../src/export/yaml.js';
import { loadRecipe } from '../../../src/host/files/recipes.js';
import { buildPlan } from '../../../src/plan/build.js';
import type { Plan } from '../../../src/plan/types.js';
import type { Recipe } from '../../../src/recipe/schema.js';

const STATE = '/home/u/.local/state/dynamo-dev';
const RUN = `${STATE}/runs/20260101-000000-x`;
const MARKERS = { paths: [RUN, STATE, '/home/u'] };

async function exported(name: string, sets: string[] = [], extra: Partial<ExportInput> = {}) {
  const recipe = await loadRecipe(name, sets);
  const plan = buildPlan({ recipe, runDir: RUN });
  return { recipe, plan, model: planToComponents({ plan, recipe, hfSecret: 'hf-token-secret', markers: MARKERS, ...extra }) };
}

const notesOf = (m: { notes: Parameters<typeof formatNote>[0][] }) => m.notes.map(formatNote);

describe('planToComponents: built-in recipes', () => {
  it('agg: a frontend with the router mode as env, one worker with one GPU and the recipe flags', async () => {
    const { model } = await exported('agg');
    expect(model.name).toBe('agg');
    expect(model.env).toEqual([{ name: 'PYTHONHASHSEED', value: '0' }]);
    const [fe, w] = model.components;
    expect(fe).toMatchObject({ name: 'Frontend', role: 'frontend', replicas: 1, command: null, args: [], gpus: 0, hfSecret: 'hf-token-secret' });
    expect(fe.env).toEqual([{ name: 'DYN_ROUTER_MODE', value: 'round-robin' }]);
    expect(w).toMatchObject({
      name: 'VllmWorker', role: 'agg', replicas: 1, processes: ['agg-0'], gpus: 1, hfSecret: 'hf-token-secret',
      command: ['python3', '-m', 'dynamo.vllm'],
      args: ['--model', 'Qwen/Qwen3-0.6B', '--max-model-len', '4096', '--enforce-eager'],
    });
    expect(w.env).toEqual([]);
  });

  it('agg-router: two replicas in one component; both KV-event endpoints become the one a pod binds', async () => {
    const { model } = await exported('agg-router');
    const w = model.components[1];
    expect(w.replicas).toBe(2);
    expect(w.processes).toEqual(['agg-0', 'agg-1']);
    const cfg = JSON.parse(w.args[w.args.indexOf('--kv-events-config') + 1]);
    expect(cfg).toEqual({ publisher: 'zmq', topic: 'kv-events', endpoint: 'tcp://*:20080', enable_kv_cache_events: true });
    expect(model.components[0].env).toEqual([{ name: 'DYN_ROUTER_MODE', value: 'kv' }]);
    expect(notesOf(model)).toContain('agg-1: kv-events endpoint tcp://*:20081 -> tcp://*:20080 (every replica runs one spec, each pod with its own ports)');
  });

  it('agg-router-approx: the frontend keeps --no-router-kv-events, so it gets the dynamo.frontend command', async () => {
    const { model } = await exported('agg-router-approx');
    expect(model.components[0]).toMatchObject({ command: ['python3', '-m', 'dynamo.frontend'], args: ['--no-router-kv-events'] });
    expect(model.components[1].args).not.toContain('--kv-events-config');
  });

  it('disagg-same-gpu: decode and prefill components with the disaggregation and KV-transfer flags', async () => {
    const { model } = await exported('disagg-same-gpu');
    expect(model.components.map((c) => [c.name, c.role, c.replicas, c.gpus])).toEqual([
      ['Frontend', 'frontend', 1, 0], ['VllmDecodeWorker', 'decode', 1, 1], ['VllmPrefillWorker', 'prefill', 1, 1],
    ]);
    const [, decode, prefill] = model.components;
    for (const c of [decode, prefill]) {
      expect(c.args.slice(c.args.indexOf('--disaggregation-mode'), c.args.indexOf('--disaggregation-mode') + 2)).toEqual(['--disaggregation-mode', c.role]);
      expect(c.args).toContain('{"kv_connector":"NixlConnector","kv_role":"kv_both"}');
    }
    // Decode workers never publish KV events; prefill does.
    expect(decode.args).not.toContain('--kv-events-config');
    expect(prefill.args).toContain('--kv-events-config');
    expect(notesOf(model)).toContain('prefill-0: starts after decode-0 is ready -> starts with the others (each worker has its own GPU on a cluster; the operator\'s probes gate readiness)');
  });

  it('mocker: CPU only, the dynamo.mocker command, no memory note', async () => {
    const { model } = await exported('mocker', ['model=Qwen/Qwen3-0.6B']);
    expect(model.engine).toBe('mocker');
    expect(model.components[1]).toMatchObject({
      name: 'MockerWorker', replicas: 2, gpus: 0, command: ['python3', '-m', 'dynamo.mocker'], args: ['--model-path', 'Qwen/Qwen3-0.6B', '--model-name', 'Qwen/Qwen3-0.6B'],
    });
    expect(notesOf(model).some((n) => n.includes('gpuMemoryUtilization'))).toBe(false);
  });
});

describe('planToComponents: change notes', () => {
  it('one line per worker whose fraction becomes a whole GPU, in the issue\'s words', async () => {
    const { model } = await exported('agg-router');
    const notes = notesOf(model);
    expect(notes.filter((n) => n.includes('gpuMemoryUtilization'))).toEqual([
      'agg-0: gpuMemoryUtilization 0.38 -> whole GPU (one GPU per worker on a cluster)',
      'agg-1: gpuMemoryUtilization 0.38 -> whole GPU (one GPU per worker on a cluster)',
    ]);
  });

  it('dropped items are grouped per reason and per set of processes, after the behaviour changes', async () => {
    const { model } = await exported('disagg-same-gpu');
    const notes = notesOf(model);
    expect(notes).toContain('every worker: VLLM_NIXL_SIDE_CHANNEL_PORT -> dropped (ports of this machine; every pod has its own network)');
    expect(notes).toContain('frontend: --http-port -> dropped (ports of this machine; every pod has its own network)');
    expect(notes).toContain('every worker: CUDA_DEVICE_ORDER, CUDA_VISIBLE_DEVICES -> dropped (GPU numbering of this machine; on a cluster a pod\'s GPUs come from its resources)');
    const firstDrop = notes.findIndex((n) => n.includes('-> dropped'));
    expect(notes.slice(firstDrop).every((n) => n.includes('-> dropped'))).toBe(true);
  });

  it('--replicas changes the count and says so; a missing role or an ambiguous one is an input error', async () => {
    const { model } = await exported('agg', [], { replicas: { agg: 4, frontend: 2 } });
    expect(model.components.map((c) => c.replicas)).toEqual([2, 4]);
    expect(notesOf(model)).toContain('VllmWorker: replicas 1 -> 4 (--replicas agg=4)');
    await expect(exported('agg', [], { replicas: { prefill: 2 } })).rejects.toThrow('--replicas prefill=2: recipe "agg" has no prefill role; roles: frontend, agg');
    const twoEntries = ['workers=[{role: agg, gpuMemoryUtilization: 0.3}, {role: agg, gpuMemoryUtilization: 0.3, args: [--seed, "1"]}]'];
    const { model: two } = await exported('agg', twoEntries);
    expect(two.components.map((c) => c.name)).toEqual(['Frontend', 'VllmWorker', 'VllmWorker-2']);
    expect(two.components[2].args.slice(-2)).toEqual(['--seed', '1']);
    await expect(exported('agg', twoEntries, { replicas: { agg: 3 } })).rejects.toThrow(/has 2 "agg" worker entries/);
  });

  it('a --gpu-memory-utilization in the recipe\'s own args is kept, with a YAML comment', async () => {
    const { model } = await exported('agg', ['workers.0.args=[--gpu-memory-utilization, "0.85"]']);
    const w = model.components[1];
    expect(w.args).toEqual(['--model', 'Qwen/Qwen3-0.6B', '--max-model-len', '4096', '--enforce-eager', '--gpu-memory-utilization', '0.85']);
    expect(w.argComments).toEqual({ 6: expect.stringContaining('kept on purpose') });
    expect(notesOf(model)).toContain("agg-0: gpuMemoryUtilization 0.38 -> 0.85 from the recipe's args (set on purpose, so kept; each worker has a whole GPU on a cluster)");
    const r = render('v1beta1', model, { image: 'img:1.0.0' });
    const yaml = toYaml(r, headerLines(model, r));
    expect(yaml).toMatch(/- "0\.85" # the recipe's own --gpu-memory-utilization, kept on purpose/);
    expect(parse(yaml).spec.components[1].podTemplate.spec.containers[0].args).toEqual(w.args);
  });

  it('a recipe name that is no Kubernetes name is made one, with a note', async () => {
    const { model } = await exported('agg', ['name="My_Agg.v2"']);
    expect(model.name).toBe('my-agg-v2');
    expect(notesOf(model)[0]).toBe('metadata.name: "My_Agg.v2" -> "my-agg-v2" (Kubernetes names are lowercase letters, digits and "-"; or pass --name)');
    const { model: given } = await exported('agg', ['name="My_Agg.v2"'], { name: 'exp1' });
    expect(given.name).toBe('exp1');
    expect(notesOf(given).some((n) => n.startsWith('metadata.name'))).toBe(false);
  });
});

describe('planToComponents: the name leaves room for the operator\'s Service names', () => {
  it('<name>-<component> fits a 63-character DNS label exactly; one more is an input error', async () => {
    // disagg's longest component is VllmPrefillWorker (17): 63 - 1 - 17 = 45.
    const { model } = await exported('disagg-same-gpu', [], { name: `a${'b'.repeat(44)}` });
    expect(model.name).toHaveLength(45);
    await expect(exported('disagg-same-gpu', [], { name: `a${'b'.repeat(45)}` }))
      .rejects.toThrow('name "abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" is 46 characters; the operator names Services <name>-<component> (a DNS label, at most 63), which leaves 45: pass a shorter --name');
  });
});

describe('planToComponents: nothing local gets through', () => {
  it('a model given as a path on this machine is an input error', async () => {
    for (const m of ['/tmp/dyn-probe/model', './model', '~/models/x']) {
      await expect(exported('mocker', [`model=${JSON.stringify(m)}`])).rejects.toThrow(UserError);
    }
    await expect(exported('mocker', ['model="/tmp/dyn-probe/model"'])).rejects.toThrow('model "/tmp/dyn-probe/model" is a path on this machine; pods download models by Hugging Face id: pass --model ORG/NAME');
  });

  it('a recipe arg naming a path under the home or state directory is an input error naming the field', async () => {
    await expect(exported('agg', ['workers.0.args=[--chat-template, /home/u/t.jinja]']))
      .rejects.toThrow('workers.0.args: "/home/u/t.jinja" is a path on this machine; pods cannot see it');
  });

  it('recipe env: local keys, *_PORT, loopback and local paths are dropped; the rest carries over', async () => {
    const { model } = await exported('agg', [
      'env={PYTHONHASHSEED: "0", HF_HUB_ENABLE_HF_TRANSFER: "1", MY_PORT: "9000", MY_HOST: 127.0.0.1, HF_HOME: /home/u/hf, DYN_LOG: debug}',
    ]);
    const all = [...model.env, ...model.components.flatMap((c) => c.env)].map((e) => e.name);
    expect(all).toEqual(expect.arrayContaining(['PYTHONHASHSEED', 'HF_HUB_ENABLE_HF_TRANSFER', 'DYN_LOG', 'DYN_ROUTER_MODE']));
    for (const gone of ['MY_PORT', 'MY_HOST', 'HF_HOME', 'DYN_FILE_KV', 'CUDA_VISIBLE_DEVICES', 'DYN_SYSTEM_PORT']) expect(all).not.toContain(gone);
  });

  it('localEnvReason: the table, the catch-alls, and what carries over', () => {
    expect(localEnvReason('VLLM_NIXL_SIDE_CHANNEL_HOST', '127.0.0.1', MARKERS)).toBe('address');
    expect(localEnvReason('DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS', '0', MARKERS)).toBe('stop');
    expect(localEnvReason('DYN_SYSTEM_ENABLED', 'true', MARKERS)).toBe('system');
    expect(localEnvReason('SOME_NEW_PORT', '1234', MARKERS)).toBe('ports');
    expect(localEnvReason('X', 'localhost', MARKERS)).toBe('address');
    expect(localEnvReason('X', `${RUN}/discovery`, MARKERS)).toBe('path');
    expect(localEnvReason('PYTHONHASHSEED', '0', MARKERS)).toBeNull();
    expect(localEnvReason('DYN_ROUTER_MODE', 'kv', MARKERS)).toBeNull();
    expect(localEnvReason('X', '/opt/models', MARKERS)).toBeNull();
  });
});

describe('planToComponents: a plan the rules do not know fails loudly', () => {
  const mutate = async (name: string, f: (p: Plan, r: Recipe) => void) => {
    const recipe = await loadRecipe(name);
    const plan = buildPlan({ recipe, runDir: RUN });
    f(plan, recipe);
    return () => planToComponents({ plan, recipe, hfSecret: null, markers: MARKERS });
  };

  it('a new per-process env value (replicas would differ) names the setting and the rule file', async () => {
    const run = await mutate('agg-router', (p) => {
      p.processes[1].env.DYN_WORKER_ID = '0';
      p.processes[2].env.DYN_WORKER_ID = '1';
    });
    expect(run).toThrow('export: agg-1 and agg-0 differ in env DYN_WORKER_ID after removing local-only items; a per-process setting is missing from src/export/local-only.ts');
  });

  it('a plan-made local path is a bug of the rules, not the user\'s input', async () => {
    const run = await mutate('agg', (p) => p.processes[1].argv.push('--log-dir', `${RUN}/logs`));
    expect(run).toThrow(/the plan put a local path into workers\.0\.args/);
    expect(run).not.toThrow(UserError);
  });
});
