import { UserError } from '../errors.js';
import { resolveFractions } from '../plan/build.js';
import type { Plan, PlannedProcess } from '../plan/types.js';
import type { Recipe, WorkerSpec } from '../recipe/schema.js';
import {
  CLUSTER_KV_EVENTS_ENDPOINT, CONTAINER_PYTHON, LOCAL_ONLY_FLAGS, containsLocalPath, localEnvReason, type LocalMarkers,
} from './local-only.js';
import { MAX_COMPONENTS } from './schema.js';
import { droppedNotes, type ChangeNote, type DroppedItem } from './notes.js';

// Plan -> the components of a DynamoGraphDeployment, independent of the API version: one
// frontend, one component per recipe worker entry with its replica count, the argv and env of its
// processes minus what belongs to this machine (local-only.ts), and a note for every change.

export interface EnvVar {
  name: string;
  value: string;
}

export type ComponentRole = 'frontend' | 'agg' | 'prefill' | 'decode';

export interface ExportComponent {
  name: string;
  role: ComponentRole;
  replicas: number;
  /** The local processes this component stands for (frontend, agg-0, agg-1). */
  processes: string[];
  /** null: the operator's default command for the component type (a frontend with no extra flags). */
  command: string[] | null;
  args: string[];
  env: EnvVar[];
  gpus: number;
  /** Secret with HF_TOKEN the component reads its env from; null for none. */
  hfSecret: string | null;
  /** Comments on args (YAML only), by index into args. */
  argComments: Record<number, string>;
}

export interface ExportModel {
  name: string;
  recipe: string;
  engine: 'vllm' | 'mocker';
  model: string;
  /** Env every component shares (graph-wide in the manifest). */
  env: EnvVar[];
  components: ExportComponent[];
  notes: ChangeNote[];
}

export interface ExportInput {
  plan: Plan;
  recipe: Recipe;
  /** --name, already validated; default: the recipe's name made a Kubernetes name. */
  name?: string;
  /** --replicas ROLE=N. */
  replicas?: Record<string, number>;
  hfSecret: string | null;
  markers: LocalMarkers;
}

const GPU_FLAG = '--gpu-memory-utilization';
const ROUTER_FLAG = '--router-mode';
const KV_EVENTS_FLAG = '--kv-events-config';

/** Longest name the operator's Services (`<dgd>-<component>`) leave room for: a DNS label is <= 63. */
const DNS_LABEL_MAX = 63;

export function planToComponents(input: ExportInput): ExportModel {
  const { plan, recipe, markers } = input;
  checkModel(plan.model);
  const notes: ChangeNote[] = [];
  const dropped: DroppedItem[] = [];
  const { name, note: nameNote } = dgdName(recipe.name, input.name);
  if (nameNote) notes.push(nameNote);

  const frontendProc = plan.processes.find((p) => p.role === 'frontend');
  if (!frontendProc) throw new Error('export: the plan has no frontend');
  // One component per worker entry plus the frontend; the CRD caps them (schema.ts): input to fix.
  if (recipe.workers.length + 1 > MAX_COMPONENTS) {
    throw new UserError(
      `recipe "${recipe.name}" has ${recipe.workers.length} worker entries, which export as ${recipe.workers.length + 1} components (the frontend and one per entry); ` +
        `a DynamoGraphDeployment holds at most ${MAX_COMPONENTS}: merge entries of the same role and settings into one with replicas: N`,
    );
  }
  const frontend = frontendComponent(frontendProc, recipe, input.hfSecret, markers, dropped);

  // Which recipe entry each worker process came from: replicas of one entry become one component.
  const entryOf = new Map<string, number>();
  for (const w of resolveFractions(recipe)) entryOf.set(w.name, recipe.workers.indexOf(w.spec));
  const workerProcs = plan.processes.filter((p) => p.role !== 'frontend');
  const gpuNotes: ChangeNote[] = [];
  const otherNotes: ChangeNote[] = [];
  const usedNames = new Map<string, number>();
  const workers: ExportComponent[] = recipe.workers.map((spec, entry) => {
    const procs = workerProcs.filter((p) => entryOf.get(p.name) === entry);
    if (procs.length === 0) throw new Error(`export: no planned process for workers.${entry}`);
    const shaped = procs.map((p) => workerShape(p, spec, entry, markers, dropped, gpuNotes, otherNotes));
    sameAcrossReplicas(procs, shaped);
    const base = `${plan.engine === 'mocker' ? 'Mocker' : 'Vllm'}${ROLE_NAME[spec.role]}`;
    const seen = (usedNames.get(base) ?? 0) + 1;
    usedNames.set(base, seen);
    return {
      name: seen === 1 ? base : `${base}-${seen}`,
      role: spec.role,
      replicas: procs.length,
      processes: procs.map((p) => p.name),
      command: [CONTAINER_PYTHON, '-m', procs[0].argv[2]],
      args: shaped[0].args,
      env: shaped[0].env,
      gpus: plan.engine === 'vllm' ? 1 : 0,
      hfSecret: input.hfSecret,
      argComments: shaped[0].comments,
    };
  });

  for (const p of workerProcs) {
    if (p.waitFor.length > 0) {
      otherNotes.push({
        who: p.name, from: `starts after ${p.waitFor.join(', ')} is ready`, to: 'starts with the others',
        why: "each worker has its own GPU on a cluster; the operator's probes gate readiness",
      });
    }
  }

  const components = [frontend, ...workers];
  const replicaNotes = applyReplicas(components, recipe, input.replicas ?? {});
  checkNameLength(name, components);
  const env = hoistSharedEnv(components);
  // What changes behaviour first (memory, replicas), then what was left on this machine.
  notes.push(
    ...gpuNotes, ...otherNotes, ...replicaNotes,
    ...droppedNotes(dropped, plan.processes.map((p) => p.name), workerProcs.map((p) => p.name)),
  );
  return { name, recipe: recipe.name, engine: plan.engine, model: plan.model, env, components, notes };
}

const ROLE_NAME: Record<WorkerSpec['role'], string> = { agg: 'Worker', prefill: 'PrefillWorker', decode: 'DecodeWorker' };

function checkModel(model: string): void {
  if (/^(\/|\.\.?(\/|$)|~)/.test(model)) {
    throw new UserError(
      `model "${model}" is a path on this machine; pods download models by Hugging Face id: pass --model ORG/NAME`,
    );
  }
}

/** Recipe names are free text; a DGD name is a DNS label (lowercase letters, digits, "-"). */
function dgdName(recipeName: string, given: string | undefined): { name: string; note: ChangeNote | null } {
  if (given !== undefined) return { name: given, note: null };
  let n = recipeName.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-+/g, '-').replace(/^-+|-+$/g, '');
  if (n && !/^[a-z]/.test(n)) n = `dgd-${n}`;
  if (!n) throw new UserError(`recipe name "${recipeName}" makes no Kubernetes name; pass --name NAME (lowercase letters, digits, "-")`);
  if (n === recipeName) return { name: n, note: null };
  return { name: n, note: { who: 'metadata.name', from: JSON.stringify(recipeName), to: JSON.stringify(n), why: 'Kubernetes names are lowercase letters, digits and "-"; or pass --name' } };
}

function checkNameLength(name: string, components: ExportComponent[]): void {
  const longest = Math.max(...components.map((c) => c.name.length));
  const max = DNS_LABEL_MAX - 1 - longest;
  if (name.length > max) {
    throw new UserError(
      `name "${name}" is ${name.length} characters; the operator names Services <name>-<component> (a DNS label, at most ${DNS_LABEL_MAX}), which leaves ${max}: pass a shorter --name`,
    );
  }
}

interface Shaped {
  args: string[];
  env: EnvVar[];
  comments: Record<number, string>;
}

/** Splits argv after `python -m module` into what the plan added and the recipe's own args (its tail). */
function splitArgv(p: PlannedProcess, own: readonly string[]): { planPart: string[]; ownPart: string[] } {
  const rest = p.argv.slice(3);
  const planPart = rest.slice(0, rest.length - own.length);
  const ownPart = rest.slice(rest.length - own.length);
  if (p.argv[1] !== '-m' || ownPart.length !== own.length || ownPart.some((a, i) => a !== own[i])) {
    throw new Error(`export: ${p.name}'s argv no longer ends with the recipe's own args; src/export/components.ts needs updating`);
  }
  return { planPart, ownPart };
}

/** `--flag value` or `--flag=value`: name, value and how many argv items it spans. */
function flagAt(argv: readonly string[], i: number): { flag: string; value: string | undefined; inline: boolean; span: number } {
  const a = argv[i];
  const eq = a.indexOf('=');
  if (a.startsWith('--') && eq > 0) return { flag: a.slice(0, eq), value: a.slice(eq + 1), inline: true, span: 1 };
  return { flag: a, value: argv[i + 1], inline: false, span: 2 };
}

function flagIndex(args: readonly string[], flag: string): number {
  return args.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
}

function keptEnv(p: PlannedProcess, markers: LocalMarkers, dropped: DroppedItem[]): EnvVar[] {
  const out: EnvVar[] = [];
  for (const [name, value] of Object.entries(p.env)) {
    const reason = localEnvReason(name, value, markers);
    if (reason) dropped.push({ process: p.name, item: name, reason });
    else out.push({ name, value });
  }
  return out;
}

function checkNoLocalPath(args: string[], where: string, plan: boolean, markers: LocalMarkers): void {
  const bad = args.find((a) => containsLocalPath(a, markers));
  if (bad === undefined) return;
  if (plan) throw new Error(`export: the plan put a local path into ${where} ("${bad}"); src/export/local-only.ts needs updating`);
  throw new UserError(`${where}: "${bad}" is a path on this machine; pods cannot see it: remove it from the recipe (or --set ${where}=[...])`);
}

function frontendComponent(
  p: PlannedProcess, recipe: Recipe, hfSecret: string | null, markers: LocalMarkers, dropped: DroppedItem[],
): ExportComponent {
  const { planPart, ownPart } = splitArgv(p, recipe.frontend.args);
  const args: string[] = [];
  let routerMode: string | null = null;
  for (let i = 0; i < planPart.length;) {
    const f = flagAt(planPart, i);
    if (LOCAL_ONLY_FLAGS[f.flag]) {
      dropped.push({ process: p.name, item: f.flag, reason: LOCAL_ONLY_FLAGS[f.flag] });
      i += f.span;
    } else if (f.flag === ROUTER_FLAG && f.value !== undefined) {
      // The operator starts the frontend itself; its router mode goes in the env (upstream examples).
      routerMode = f.value;
      i += f.span;
    } else {
      args.push(planPart[i]);
      i += 1;
    }
  }
  checkNoLocalPath(args, 'frontend.args', true, markers);
  checkNoLocalPath(ownPart, 'frontend.args', false, markers);
  args.push(...ownPart);
  const env = keptEnv(p, markers, dropped).filter((e) => !(routerMode !== null && e.name === 'DYN_ROUTER_MODE'));
  if (routerMode !== null) env.unshift({ name: 'DYN_ROUTER_MODE', value: routerMode });
  return {
    name: 'Frontend',
    role: 'frontend',
    replicas: 1,
    processes: [p.name],
    command: args.length > 0 ? [CONTAINER_PYTHON, '-m', p.argv[2]] : null,
    args,
    env,
    gpus: 0,
    // The frontend tokenizes, so it may fetch tokenizer files of a gated model too (Dynamo 1.6.1's
    // own DGD template, dynamo/profiler/templates/dgd/vllm/disagg.yaml, gives it the Secret as well).
    hfSecret,
    argComments: {},
  };
}

function workerShape(
  p: PlannedProcess, spec: WorkerSpec, entry: number, markers: LocalMarkers,
  dropped: DroppedItem[], gpuNotes: ChangeNote[], otherNotes: ChangeNote[],
): Shaped {
  const { planPart, ownPart } = splitArgv(p, spec.args);
  const args: string[] = [];
  let fraction: string | undefined;
  for (let i = 0; i < planPart.length;) {
    const f = flagAt(planPart, i);
    if (LOCAL_ONLY_FLAGS[f.flag]) {
      dropped.push({ process: p.name, item: f.flag, reason: LOCAL_ONLY_FLAGS[f.flag] });
      i += f.span;
    } else if (f.flag === GPU_FLAG) {
      // A fraction chosen so workers share one GPU; on a cluster each worker has its own.
      fraction = f.value;
      i += f.span;
    } else if (f.flag === KV_EVENTS_FLAG && f.value !== undefined) {
      const value = clusterKvEvents(f.value, p.name, otherNotes);
      args.push(...(f.inline ? [`${f.flag}=${value}`] : [f.flag, value]));
      i += f.span;
    } else {
      args.push(planPart[i]);
      i += 1;
    }
  }
  checkNoLocalPath(args, `workers.${entry}.args`, true, markers);
  checkNoLocalPath(ownPart, `workers.${entry}.args`, false, markers);
  const comments: Record<number, string> = {};
  const own = flagIndex(ownPart, GPU_FLAG);
  if (own >= 0) {
    const f = flagAt(ownPart, own);
    comments[args.length + own + (f.inline ? 0 : 1)] =
      " the recipe's own --gpu-memory-utilization, kept on purpose (each worker has a whole GPU here)";
    if (fraction !== undefined) {
      gpuNotes.push({
        who: p.name, from: `gpuMemoryUtilization ${fraction}`, to: `${f.value} from the recipe's args`,
        why: 'set on purpose, so kept; each worker has a whole GPU on a cluster',
      });
    }
  } else if (fraction !== undefined) {
    gpuNotes.push({ who: p.name, from: `gpuMemoryUtilization ${fraction}`, to: 'whole GPU', why: 'one GPU per worker on a cluster' });
  }
  args.push(...ownPart);
  return { args, env: keptEnv(p, markers, dropped), comments };
}

/** Every replica shares one spec: the publisher binds the same port in each pod. */
function clusterKvEvents(value: string, who: string, notes: ChangeNote[]): string {
  let cfg: unknown;
  try {
    cfg = JSON.parse(value);
  } catch {
    return value;
  }
  if (!cfg || typeof cfg !== 'object' || Array.isArray(cfg)) return value;
  const obj = cfg as Record<string, unknown>;
  if (typeof obj.endpoint !== 'string' || obj.endpoint === CLUSTER_KV_EVENTS_ENDPOINT) return value;
  notes.push({
    who, from: `kv-events endpoint ${obj.endpoint}`, to: CLUSTER_KV_EVENTS_ENDPOINT,
    why: 'every replica runs one spec, each pod with its own ports',
  });
  return JSON.stringify({ ...obj, endpoint: CLUSTER_KV_EVENTS_ENDPOINT });
}

/** Replicas of one entry must come out identical once local items are gone; else a rule is missing. */
function sameAcrossReplicas(procs: PlannedProcess[], shaped: Shaped[]): void {
  const first = JSON.stringify({ args: shaped[0].args, env: shaped[0].env });
  shaped.forEach((s, i) => {
    if (JSON.stringify({ args: s.args, env: s.env }) === first) return;
    const argDiff = s.args.find((a, j) => a !== shaped[0].args[j]);
    const envDiff = s.env.find((e, j) => e.name !== shaped[0].env[j]?.name || e.value !== shaped[0].env[j]?.value);
    const what = argDiff !== undefined ? `arg "${argDiff}"` : envDiff ? `env ${envDiff.name}` : 'args or env';
    throw new Error(
      `export: ${procs[i].name} and ${procs[0].name} differ in ${what} after removing local-only items; ` +
        'a per-process setting is missing from src/export/local-only.ts',
    );
  });
}

function applyReplicas(components: ExportComponent[], recipe: Recipe, replicas: Record<string, number>): ChangeNote[] {
  const notes: ChangeNote[] = [];
  const roles = ['frontend', ...new Set(recipe.workers.map((w) => w.role))];
  for (const [role, n] of Object.entries(replicas)) {
    const matching = components.filter((c) => c.role === role);
    if (matching.length === 0) {
      throw new UserError(`--replicas ${role}=${n}: recipe "${recipe.name}" has no ${role} role; roles: ${roles.join(', ')}`);
    }
    if (matching.length > 1) {
      throw new UserError(
        `--replicas ${role}=${n}: recipe "${recipe.name}" has ${matching.length} "${role}" worker entries; set each with --set workers.N.replicas=...`,
      );
    }
    const c = matching[0];
    if (c.replicas !== n) notes.push({ who: c.name, from: `replicas ${c.replicas}`, to: String(n), why: `--replicas ${role}=${n}` });
    c.replicas = n;
  }
  return notes;
}

/** Env every component has with the same value becomes graph-wide (spec.env / spec.envs). */
function hoistSharedEnv(components: ExportComponent[]): EnvVar[] {
  const [first, ...rest] = components;
  const shared = first.env.filter((e) => rest.every((c) => c.env.some((o) => o.name === e.name && o.value === e.value)));
  const names = new Set(shared.map((e) => e.name));
  for (const c of components) c.env = c.env.filter((e) => !names.has(e.name));
  return shared;
}
