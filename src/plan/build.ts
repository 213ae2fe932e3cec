import { join } from 'node:path';
import { UserError } from '../errors.js';
import { raiseFractionSet, workerEntryOf } from './fix-hints.js';
import type { Recipe, WorkerSpec } from '../recipe/schema.js';
import { kvTokensFor, overheadMiB } from './kv-math.js';
import { KV_LINE_PATTERN, type Plan, type PlannedProcess } from './types.js';

export interface PlanInput {
  recipe: Recipe;
  /** runs/<id>: DYN_FILE_KV lives under it, so runs never see each other's registrations. */
  runDir: string;
  /** Total memory of the recipe's GPU when known (nvidia-smi). */
  gpuTotalMiB?: number | null;
  /** From the model's config.json and weight files in the HF cache, when cached. */
  model?: { bytesPerToken: number; weightsMiB: number | null } | null;
  /** Interpreter override (--python, $DYNAMO_DEV_PYTHON). */
  python?: string;
  /** Where the recipe came from (file or built-in name): errors name it, so the user knows which file to edit. */
  source?: string;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

interface Expanded {
  spec: WorkerSpec;
  name: string;
  fraction: number;
}

/** Resolves "auto": the limit minus the explicit fractions, split evenly over the auto replicas. */
export function resolveFractions(recipe: Recipe): Expanded[] {
  const counters: Record<string, number> = {};
  const out: { spec: WorkerSpec; name: string; fraction: number | 'auto' }[] = [];
  recipe.workers.forEach((spec, wi) => {
    for (let r = 0; r < spec.replicas; r++) {
      const n = counters[spec.role] ?? 0;
      counters[spec.role] = n + 1;
      out.push({ spec, name: `${spec.role}-${n}`, fraction: spec.gpuMemoryUtilization });
      void wi;
    }
  });
  const explicit = out.reduce((s, w) => s + (w.fraction === 'auto' ? 0 : w.fraction), 0);
  const autos = out.filter((w) => w.fraction === 'auto').length;
  const limit = recipe.memory.limit;
  if (explicit > limit + 1e-9) {
    const parts = out.filter((w) => w.fraction !== 'auto').map((w) => `${w.name} ${w.fraction}`).join(' + ');
    throw new UserError(
      `workers.*.gpuMemoryUtilization: the fractions add up to ${round2(explicit)} (${parts}), over memory.limit ${limit}; lower them so they sum to <= ${limit}`,
    );
  }
  // Floor to 2 decimals so the sum never exceeds the limit by rounding.
  const each = autos > 0 ? Math.floor(((limit - explicit) / autos) * 100) / 100 : 0;
  if (autos > 0 && each <= 0) {
    throw new UserError(
      `workers.*.gpuMemoryUtilization: "auto" leaves nothing: explicit fractions use ${round2(explicit)} of memory.limit ${limit}`,
    );
  }
  return out.map((w) => ({ spec: w.spec, name: w.name, fraction: w.fraction === 'auto' ? each : w.fraction }));
}

/** Recipe -> plan. A plan that cannot fit is a UserError (exit 2) naming the recipe and the numbers. */
export function buildPlan(input: PlanInput): Plan {
  try {
    return planOf(input);
  } catch (err) {
    if (input.source && err instanceof UserError) throw new UserError(`${input.source}: ${err.message}`, err.fix);
    throw err;
  }
}

function planOf(input: PlanInput): Plan {
  const { recipe, runDir } = input;
  const python = input.python ?? recipe.python;
  const workers = resolveFractions(recipe);
  const disaggregated = workers.some((w) => w.spec.role !== 'agg');
  if (disaggregated && workers.some((w) => w.spec.role === 'agg')) {
    throw new UserError('workers: mixes "agg" with "prefill"/"decode" roles; a recipe is either aggregated or disaggregated');
  }
  if (disaggregated && !(workers.some((w) => w.spec.role === 'prefill') && workers.some((w) => w.spec.role === 'decode'))) {
    throw new UserError('workers: a disaggregated recipe needs at least one "prefill" and one "decode" worker');
  }
  const routerMode = recipe.frontend.routerMode;
  const kvRouterWithEvents = routerMode === 'kv' && recipe.frontend.kvEvents;
  const common: Record<string, string> = { ...recipe.env };
  if (recipe.discovery === 'file') {
    Object.assign(common, {
      DYN_DISCOVERY_BACKEND: 'file',
      DYN_FILE_KV: join(runDir, 'discovery'),
      // ZMQ event plane and TCP request plane: no NATS or etcd needed on one machine.
      DYN_EVENT_PLANE: 'zmq',
      DYN_REQUEST_PLANE: 'tcp',
    });
  } else {
    common.DYN_DISCOVERY_BACKEND = recipe.discovery;
  }

  const http = recipe.frontend.httpPort;
  const frontendUrl = `http://127.0.0.1:${http}`;
  const frontendArgv = [python, '-m', 'dynamo.frontend', '--http-port', String(http), '--router-mode', routerMode];
  if (routerMode === 'kv' && !recipe.frontend.kvEvents) frontendArgv.push('--no-router-kv-events');
  if (recipe.discovery === 'file') frontendArgv.push('--discovery-backend', 'file');
  frontendArgv.push(...recipe.frontend.args);
  const frontend: PlannedProcess = {
    name: 'frontend',
    role: 'frontend',
    argv: frontendArgv,
    env: { ...common, ...recipe.frontend.env },
    ports: { http },
    gpuMemoryUtilization: null,
    waitFor: [],
    ready: { http: `${frontendUrl}/v1/models` },
    publishesKvEvents: false,
    kvTokensEstimate: null,
  };

  const total = input.gpuTotalMiB ?? null;
  let kvEventsPort = recipe.ports.kvEvents;
  let nixlPort = recipe.ports.nixlSideChannel;
  const procs: PlannedProcess[] = [frontend];
  let prev: string | null = null;
  workers.forEach((w, i) => {
    const systemPort = recipe.ports.system + i;
    // Decode workers never publish KV events (by design); agg and prefill do under a KV router.
    // The mocker publishes its simulated cache events itself: it takes no --kv-events-config.
    const publishes = kvRouterWithEvents && w.spec.role !== 'decode';
    const mocker = recipe.engine === 'mocker';
    const ports: Record<string, number> = { system: systemPort };
    const env: Record<string, string> = {
      // Deterministic hashes for KV event block ids (FACTS §4), also when a recipe's own `env:`
      // replaces the default one; the recipe can still set it explicitly.
      PYTHONHASHSEED: '0',
      ...common,
      // CUDA numbers GPUs fastest-first unless told otherwise; nvidia-smi (and so doctor) numbers
      // them by PCI bus. Without this, `gpu: 1` on a two-GPU machine may run on the GPU doctor did not check.
      CUDA_DEVICE_ORDER: 'PCI_BUS_ID',
      CUDA_VISIBLE_DEVICES: String(recipe.gpu),
      DYN_SYSTEM_PORT: String(systemPort),
      DYN_SYSTEM_ENABLED: 'true',
    };
    let argv: string[];
    if (recipe.engine === 'mocker') {
      argv = [python, '-m', 'dynamo.mocker', '--model-path', recipe.model];
    } else {
      argv = [python, '-m', 'dynamo.vllm', '--model', recipe.model,
        '--gpu-memory-utilization', String(w.fraction), '--max-model-len', String(recipe.maxModelLen)];
      if (recipe.enforceEager) argv.push('--enforce-eager');
    }
    if (w.spec.role !== 'agg') argv.push('--disaggregation-mode', w.spec.role);
    if (disaggregated && recipe.engine === 'vllm') {
      argv.push('--kv-transfer-config', JSON.stringify({ kv_connector: 'NixlConnector', kv_role: 'kv_both' }));
      ports.nixlSideChannel = nixlPort;
      env.VLLM_NIXL_SIDE_CHANNEL_PORT = String(nixlPort++);
    }
    if (publishes && !mocker) {
      ports.kvEvents = kvEventsPort;
      argv.push('--kv-events-config', JSON.stringify({
        publisher: 'zmq', topic: 'kv-events', endpoint: `tcp://*:${kvEventsPort++}`, enable_kv_cache_events: true,
      }));
    }
    argv.push(...w.spec.args);
    Object.assign(env, w.spec.env);
    // Unknown (or empty) weights would make an exact-looking estimate of a guess: no estimate then.
    const estimate = total !== null && input.model && input.model.weightsMiB && !mocker
      ? kvTokensFor({
          gpuTotalMiB: total,
          fraction: w.fraction,
          weightsMiB: input.model.weightsMiB,
          overheadMiB: overheadMiB(recipe.enforceEager),
          bytesPerToken: input.model.bytesPerToken,
        })
      : null;
    procs.push({
      name: w.name,
      role: w.spec.role,
      argv,
      env,
      ports,
      gpuMemoryUtilization: recipe.engine === 'mocker' ? null : w.fraction,
      // Workers sharing the GPU start one after another (vLLM profiles free memory at start);
      // the mocker uses no GPU memory, so its workers start together.
      waitFor: recipe.startup === 'sequential' && prev && !mocker ? [prev] : [],
      ready: recipe.engine === 'mocker'
        ? { http: `http://127.0.0.1:${systemPort}/health` }
        : { logPattern: KV_LINE_PATTERN, http: `http://127.0.0.1:${systemPort}/health` },
      publishesKvEvents: publishes,
      kvTokensEstimate: estimate,
    });
    prev = w.name;
  });

  const fractionSum = round2(workers.reduce((s, w) => s + w.fraction, 0));
  const plan: Plan = {
    recipe: recipe.name,
    model: recipe.model,
    engine: recipe.engine,
    gpu: { index: recipe.gpu, totalMiB: total },
    budget: {
      fractionSum: recipe.engine === 'mocker' ? 0 : fractionSum,
      limit: recipe.memory.limit,
      budgetMiB: total !== null && recipe.engine !== 'mocker' ? Math.ceil(total * fractionSum) : null,
    },
    maxModelLen: recipe.maxModelLen,
    router: { mode: routerMode, kvEvents: recipe.frontend.kvEvents },
    disaggregated,
    frontendUrl,
    runDir,
    processes: procs,
    memory: {
      bytesPerToken: input.model?.bytesPerToken ?? null,
      weightsMiB: input.model?.weightsMiB || null,
      overheadMiB: recipe.engine === 'mocker' ? null : overheadMiB(recipe.enforceEager),
    },
  };
  checkPortRange(plan, recipe);
  checkPortsDistinct(plan);
  checkKvFits(plan, input);
  return plan;
}

/** Ranges count up from their first port, one per worker: the last one must still be a port (<= 65535). */
function checkPortRange(plan: Plan, recipe: Recipe): void {
  const field: Record<string, [string, number]> = {
    system: ['ports.system', recipe.ports.system],
    kvEvents: ['ports.kvEvents', recipe.ports.kvEvents],
    nixlSideChannel: ['ports.nixlSideChannel', recipe.ports.nixlSideChannel],
  };
  for (const p of plan.processes) {
    for (const [k, port] of Object.entries(p.ports)) {
      if (port <= 65535) continue;
      const [name, first] = field[k] ?? [k, port];
      const used = plan.processes.filter((q) => q.ports[k] !== undefined).length;
      throw new UserError(
        `${name}: ${used} workers count up from ${first} to ${port} (${p.name}), past the last port 65535; set ${name} to at most ${65535 - used + 1}`,
      );
    }
  }
}

function checkPortsDistinct(plan: Plan): void {
  const seen = new Map<number, string>();
  for (const p of plan.processes) {
    for (const [k, port] of Object.entries(p.ports)) {
      const who = `${p.name}.${k}`;
      const other = seen.get(port);
      if (other) throw new UserError(`ports: ${who} and ${other} would both use port ${port}; move ports.* or frontend.httpPort apart`);
      seen.set(port, who);
    }
  }
}

/** A worker whose KV cache cannot hold one request of max length is a plan that cannot fit. */
function checkKvFits(plan: Plan, input: PlanInput): void {
  for (const p of plan.processes) {
    if (p.kvTokensEstimate === null || p.kvTokensEstimate >= plan.maxModelLen) continue;
    const total = plan.gpu.totalMiB ?? 0;
    const f = p.gpuMemoryUtilization ?? 0;
    const weights = Math.round(input.model?.weightsMiB ?? 0);
    const overhead = overheadMiB(plan.engine === 'vllm' && p.argv.includes('--enforce-eager'));
    const kvMiB = Math.max(0, Math.round(total * f - weights - overhead));
    // A fix that works for this recipe: the fraction that would hold maxModelLen (when the limit
    // allows it), else a maxModelLen this fraction holds.
    const entry = workerEntryOf(input.recipe, p.name);
    const most = entry === null ? null : raiseFractionSet(input.recipe, entry);
    const mostValue = most ? Number(most.slice(most.lastIndexOf('=') + 1)) : f;
    let need: number | null = null;
    for (let g = Math.round(f * 100) + 1; g <= Math.round(mostValue * 100) && need === null && input.model; g++) {
      const tokens = kvTokensFor({ gpuTotalMiB: total, fraction: g / 100, weightsMiB: input.model.weightsMiB ?? 0, overheadMiB: overhead, bytesPerToken: input.model.bytesPerToken });
      if (tokens >= plan.maxModelLen) need = g / 100;
    }
    const raise = entry !== null && need !== null ? `--set workers.${entry}.gpuMemoryUtilization=${need}` : null;
    const shorter = p.kvTokensEstimate >= 256 ? `--set maxModelLen=${Math.floor(p.kvTokensEstimate / 256) * 256}` : null;
    throw new UserError(
      `workers: ${p.name} at gpuMemoryUtilization ${f} gets ~${Math.round(total * f)} MiB of ${total} MiB; after weights ` +
        `(~${weights} MiB) and overhead (~${overhead} MiB) that leaves ~${kvMiB} MiB = ~${p.kvTokensEstimate} KV tokens ` +
        `at ${input.model?.bytesPerToken.toLocaleString('en-US')} bytes/token, fewer than maxModelLen ${plan.maxModelLen}`,
      [raise ? `raise its fraction (${raise})` : null, shorter ? `lower maxModelLen (${shorter})` : null].filter(Boolean).join(' or ')
        || 'the GPU is too small for this model at this maxModelLen: use a smaller model or a shorter maxModelLen',
    );
  }
}

/** Every port of the plan with a name like "agg-0.system". */
export function planPorts(plan: Plan): { name: string; port: number; process: string }[] {
  return plan.processes.flatMap((p) => Object.entries(p.ports).map(([k, port]) => ({ name: `${p.name}.${k}`, port, process: p.name })));
}
