import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CLUSTER_KV_EVENTS_ENDPOINT, LOCAL_ONLY_FLAGS, localEnvReason } from '../../src/export/local-only.js';
import { checkManifest } from '../../src/export/schema.js';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';

// export k8s through the built binary, with the fake `dynamo` package (version 1.6.1) on PYTHONPATH.

let home: ReturnType<typeof tempHome>;
let env: Record<string, string | undefined>;
beforeEach(() => {
  home = tempHome('dd-e2e-export-');
  env = fakeEnv(home, { python: true });
});
afterEach(() => home.cleanup());

type Api = 'v1beta1' | 'v1alpha1';
interface Comp {
  name: string;
  role: string;
  replicas: number;
  gpus: number;
  image: string;
  command: string[] | undefined;
  args: string[];
  env: Record<string, string>;
  secret: string | undefined;
}

/** The components of either API version in one shape (graph-wide env merged into each). */
function components(d: any, api: Api): Comp[] {
  const envOf = (list: { name: string; value: string }[] | undefined) => Object.fromEntries((list ?? []).map((e) => [e.name, e.value]));
  if (api === 'v1beta1') {
    return d.spec.components.map((c: any) => {
      const m = c.podTemplate.spec.containers.find((x: any) => x.name === 'main');
      return {
        name: c.name, role: c.type === 'worker' ? 'agg' : c.type, replicas: c.replicas,
        gpus: Number(m.resources?.limits?.['nvidia.com/gpu'] ?? 0), image: m.image, command: m.command, args: m.args ?? [],
        env: { ...envOf(d.spec.env), ...envOf(m.env) }, secret: m.envFrom?.[0]?.secretRef?.name,
      };
    });
  }
  return Object.entries(d.spec.services).map(([name, s]: [string, any]) => ({
    name, role: s.componentType === 'frontend' ? 'frontend' : (s.subComponentType ?? 'agg'), replicas: s.replicas,
    gpus: Number(s.resources?.limits?.gpu ?? 0), image: s.extraPodSpec.mainContainer.image,
    command: s.extraPodSpec.mainContainer.command, args: s.extraPodSpec.mainContainer.args ?? [],
    env: { ...envOf(d.spec.envs), ...envOf(s.envs) }, secret: s.envFromSecret,
  }));
}

/** Ports this machine would use, set to numbers that cannot appear in a manifest by chance. */
const LOCAL_PORTS = { system: 9123, kvEvents: 23456, nixlSideChannel: 24567, http: 8765 };
const PORT_SETS = [
  '--set', `ports.system=${LOCAL_PORTS.system}`, '--set', `ports.kvEvents=${LOCAL_PORTS.kvEvents}`,
  '--set', `ports.nixlSideChannel=${LOCAL_PORTS.nixlSideChannel}`, '--set', `frontend.httpPort=${LOCAL_PORTS.http}`,
];

const EXPECTED: Record<string, { roles: [string, number, number][]; router: string; image: string }> = {
  agg: { roles: [['frontend', 1, 0], ['agg', 1, 1]], router: 'round-robin', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1' },
  'agg-router': { roles: [['frontend', 1, 0], ['agg', 2, 1]], router: 'kv', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1' },
  'disagg-same-gpu': { roles: [['frontend', 1, 0], ['decode', 1, 1], ['prefill', 1, 1]], router: 'kv', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1' },
  mocker: { roles: [['frontend', 1, 0], ['agg', 2, 0]], router: 'kv', image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1' },
};

describe('dynamo-dev export k8s: the four built-in recipes x both API versions', () => {
  for (const [recipe, want] of Object.entries(EXPECTED)) {
    for (const api of ['v1beta1', 'v1alpha1'] as const) {
      it(`${recipe} --api ${api}`, async () => {
        const r = await runCli(['export', 'k8s', recipe, '--api', api, ...PORT_SETS], env);
        expect(r.code).toBe(0);
        const docs = parseAllDocuments(r.stdout);
        expect(docs).toHaveLength(1);
        expect(docs[0].errors).toEqual([]);
        const d = docs[0].toJS();
        expect([d.apiVersion, d.kind, d.metadata.name]).toEqual([`nvidia.com/${api}`, 'DynamoGraphDeployment', recipe]);
        expect(checkManifest(d, api)).toEqual([]);

        const comps = components(d, api);
        expect(comps.map((c) => [c.role, c.replicas, c.gpus])).toEqual(want.roles);
        expect(comps.every((c) => c.image === want.image)).toBe(true);
        const [frontend, ...workers] = comps;
        expect(frontend.env.DYN_ROUTER_MODE).toBe(want.router);
        expect(frontend.secret).toBe('hf-token-secret');
        for (const w of workers) {
          const mocker = recipe === 'mocker';
          expect(w.command).toEqual(['python3', '-m', mocker ? 'dynamo.mocker' : 'dynamo.vllm']);
          expect(w.args.slice(0, 2)).toEqual([mocker ? '--model-path' : '--model', 'Qwen/Qwen3-0.6B']);
          if (!mocker) expect(w.args).toEqual(expect.arrayContaining(['--max-model-len', '4096', '--enforce-eager']));
          if (w.role !== 'agg') {
            expect(w.args).toEqual(expect.arrayContaining(['--disaggregation-mode', w.role, '--kv-transfer-config']));
          }
          expect(w.args).not.toContain('--gpu-memory-utilization');
          expect(w.env.PYTHONHASHSEED).toBe('0');
          expect(w.secret).toBe('hf-token-secret');
        }

        // Nothing of this machine: its ports, paths, devices, discovery directory, loopback.
        for (const port of [...Object.values(LOCAL_PORTS), LOCAL_PORTS.system + 1, LOCAL_PORTS.kvEvents + 1, LOCAL_PORTS.nixlSideChannel + 1]) {
          expect(r.stdout).not.toMatch(new RegExp(`\\b${port}\\b`));
        }
        for (const local of [home.dir, '127.0.0.1', 'CUDA_VISIBLE_DEVICES', 'CUDA_DEVICE_ORDER', 'DYN_FILE_KV', 'DYN_SYSTEM_PORT', 'VLLM_NIXL_SIDE_CHANNEL', '--http-port', '--discovery-backend']) {
          expect(r.stdout).not.toContain(local);
        }
        if (recipe !== 'mocker') expect(r.stderr).toContain(`${workers[0].role}-0: gpuMemoryUtilization 0.38 -> whole GPU (one GPU per worker on a cluster)`);
      });
    }
  }
});

describe('dynamo-dev export k8s: round trip over every built-in recipe', () => {
  it('the mocker recipe\'s embedded model (a folder here) becomes Qwen/Qwen3-0.6B, said in one stderr line; --model is taken as given', async () => {
    const r = await runCli(['export', 'k8s', 'mocker'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split('\n')[0]).toBe('model: dynamo-dev/tiny -> Qwen/Qwen3-0.6B (the embedded model is a folder on this machine; pods download by Hugging Face id; --model to choose another)');
    expect(r.stdout).not.toContain('models/tiny');
    const given = await runCli(['export', 'k8s', 'mocker', '--model', 'Qwen/Qwen3-8B'], env);
    expect(given.stderr).not.toContain('dynamo-dev/tiny');
    expect(given.stdout).toContain('Qwen/Qwen3-8B');
  });

  it("each exported worker's args are the plan's argv minus the local-only items; env likewise", async () => {
    const list = JSON.parse((await runCli(['recipes', '--json'], env)).stdout).recipes.map((r: { name: string }) => r.name);
    expect(list).toEqual(expect.arrayContaining(['agg', 'agg-router', 'agg-router-approx', 'disagg-same-gpu', 'mocker']));
    for (const recipe of list) {
      const [planRun, exp] = await Promise.all([
        // The mocker's embedded model is exported as Qwen/Qwen3-0.6B (a folder here, an id there).
        runCli(['up', recipe, ...(recipe === 'mocker' ? ['--model', 'Qwen/Qwen3-0.6B'] : []), '--dry-run', '--json'], env),
        runCli(['export', 'k8s', recipe, '--json'], env),
      ]);
      expect([recipe, planRun.code, exp.code]).toEqual([recipe, 0, 0]);
      const plan = JSON.parse(planRun.stdout);
      const comps = components(JSON.parse(exp.stdout), 'v1beta1');
      const markers = { paths: [plan.runDir, home.stateDir, process.env.HOME ?? '/nonexistent'] };
      for (const p of plan.processes) {
        const c = comps.find((x) => x.role === p.role)!;
        const rest: string[] = p.argv.slice(3);
        const expected: string[] = [];
        let routerMode: string | undefined;
        for (let i = 0; i < rest.length; i++) {
          const a = rest[i];
          if (a === '--gpu-memory-utilization' || a in LOCAL_ONLY_FLAGS) i++;
          else if (a === '--router-mode') routerMode = rest[++i];
          else if (a === '--kv-events-config') expected.push(a, JSON.stringify({ ...JSON.parse(rest[++i]), endpoint: CLUSTER_KV_EVENTS_ENDPOINT }));
          else expected.push(a);
        }
        expect([recipe, p.name, c.args]).toEqual([recipe, p.name, expected]);
        expect(c.command?.[2] ?? 'dynamo.frontend').toBe(p.argv[2]);
        const keptEnv = Object.fromEntries(Object.entries(p.env as Record<string, string>).filter(([k, v]) => localEnvReason(k, v, markers) === null));
        expect([recipe, p.name, c.env]).toEqual([recipe, p.name, routerMode ? { ...keptEnv, DYN_ROUTER_MODE: routerMode } : keptEnv]);
      }
    }
  });
});

describe('dynamo-dev export k8s: output and options', () => {
  it('-o writes the file and says how to apply it; --force replaces an existing one', async () => {
    const out = join(home.dir, 'dgd.yaml');
    const r = await runCli(['export', 'k8s', 'agg-router', '-o', out, '--namespace', 'team-a'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n').at(-1)).toBe(`wrote ${out}: kubectl apply -f ${out} -n team-a`);
    const first = readFileSync(out, 'utf8');
    expect(parseAllDocuments(first)[0].toJS().metadata).toEqual({ name: 'agg-router', namespace: 'team-a' });

    const again = await runCli(['export', 'k8s', 'agg', '-o', out, '--force', '--json'], env);
    expect(again.code).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8')).metadata.name).toBe('agg');
  });

  it('--image skips the Python probe; --name, --replicas, --no-hf-secret; notes on stderr only', async () => {
    const r = await runCli(['export', 'k8s', 'disagg-same-gpu', '--image', 'reg.example:5000/dynamo/vllm:2.0.0', '--name', 'exp7',
      '--replicas', 'decode=3', '--replicas', 'frontend=2', '--no-hf-secret', '--json'], { ...env, PYTHONPATH: undefined });
    expect(r.code).toBe(0);
    const d = JSON.parse(r.stdout);
    const comps = components(d, 'v1beta1');
    expect(d.metadata.name).toBe('exp7');
    expect(comps.map((c) => [c.role, c.replicas])).toEqual([['frontend', 2], ['decode', 3], ['prefill', 1]]);
    expect(comps.every((c) => c.image === 'reg.example:5000/dynamo/vllm:2.0.0' && c.secret === undefined)).toBe(true);
    expect(r.stderr).toContain('VllmDecodeWorker: replicas 1 -> 3 (--replicas decode=3)');
    expect(r.stderr).toContain('Frontend: replicas 1 -> 2 (--replicas frontend=2)');
  });

  it('an image without a version tag is written, with a note about runtimeVersionOverride', async () => {
    const r = await runCli(['export', 'k8s', 'agg', '--image', 'myreg/vllm:latest'], env);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('note: image myreg/vllm:latest has no X.Y.Z tag; newer operators then want runtimeVersionOverride on each component (docs/export.md)');
  });
});

describe('dynamo-dev export k8s: the image of the Dynamo setup installed', () => {
  it('python3 has no Dynamo, setup made a mocker environment of 1.4.2: export k8s agg defaults to vllm-runtime:1.4.2', async () => {
    // Issue 31: with only a mocker environment, `export k8s agg` asked for --image.
    const envs = join(home.dir, 'xdg', 'dynamo-dev', 'envs', '1.4.2-mocker');
    mkdirSync(join(envs, 'bin'), { recursive: true });
    writeFileSync(join(envs, 'bin', 'python'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    writeFileSync(join(envs, 'dynamo-dev-setup.json'), JSON.stringify({ schema: 1, release: '1.4.2', engine: 'mocker', installer: 'pip', dependencies: 'normal', placeholder: null, python: join(envs, 'bin', 'python'), basePython: { path: '/usr/bin/python3', version: '3.12.3' }, completedAt: '2026-12-07T09:00:00.000Z', durationMs: 1 }));
    const r = await runCli(['export', 'k8s', 'agg'], { ...env, FAKE_MISSING_MODULES: 'dynamo', XDG_CACHE_HOME: join(home.dir, 'xdg') });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.2');
  });
});

describe('dynamo-dev export k8s: bad input is one line, exit 2, nothing written', () => {
  const out = () => join(home.dir, 'dgd.yaml');
  const cases: [string, () => string[], () => Record<string, string | undefined>, string | (() => string)][] = [
    ['unknown --api', () => ['export', 'k8s', 'agg', '--api', 'v2', '-o', out()], () => env,
      'dynamo-dev: --api: unknown API version "v2"; valid: v1beta1, v1alpha1 (default v1beta1)'],
    ['--replicas for a role the recipe lacks', () => ['export', 'k8s', 'agg', '--replicas', 'prefill=2', '-o', out()], () => env,
      'dynamo-dev: --replicas prefill=2: recipe "agg" has no prefill role; roles: frontend, agg'],
    ['no --image and no Dynamo', () => ['export', 'k8s', 'agg', '-o', out()], () => ({ ...env, FAKE_MISSING_MODULES: 'dynamo' }),
      "dynamo-dev: no --image and no Dynamo in python3 (ModuleNotFoundError: No module named 'dynamo'); pass --image nvcr.io/nvidia/ai-dynamo/vllm-runtime:<Dynamo version>"],
    ['no --image and no Python', () => ['--python', join(home.dir, 'no-python'), 'export', 'k8s', 'mocker', '-o', out()], () => env,
      () => `dynamo-dev: no --image and no Dynamo version: Python interpreter "${join(home.dir, 'no-python')}" not found (ENOENT); pass --image nvcr.io/nvidia/ai-dynamo/dynamo-planner:<Dynamo version>`],
    ['a model path on this machine', () => ['export', 'k8s', 'mocker', '--model', '/tmp/dyn-probe/model', '-o', out()], () => env,
      'dynamo-dev: model "/tmp/dyn-probe/model" is a path on this machine; pods download models by Hugging Face id: pass --model ORG/NAME'],
    ['a bad --name', () => ['export', 'k8s', 'agg', '--name', 'My_DGD', '-o', out()], () => env,
      'dynamo-dev: --name: "My_DGD" is not a Kubernetes name (lowercase letters, digits and "-", starting with a letter, at most 63)'],
  ];
  for (const [what, args, envOf, line] of cases) {
    it(what, async () => {
      const r = await runCli(args(), envOf());
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(typeof line === 'function' ? line() : line);
      expect(r.stdout).toBe('');
      expect(existsSync(out())).toBe(false);
    });
  }

  it('-o onto an existing file refuses without --force and leaves it as it was', async () => {
    writeFileSync(out(), 'my notes\n');
    const r = await runCli(['export', 'k8s', 'agg', '-o', out()], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`dynamo-dev: -o ${out()}: the file exists; pass --force to overwrite it`);
    expect(r.stdout).toBe('');
    expect(readFileSync(out(), 'utf8')).toBe('my notes\n');
  });
});
