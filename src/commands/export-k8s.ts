import { homedir } from 'node:os';
import type { CommandContext } from './context.js';
import { EXIT } from './context.js';
import { UserError } from '../errors.js';
import { loadRecipe } from '../host/files/recipes.js';
import { buildPlan } from '../plan/build.js';
import { newRunId, runDir } from '../run/paths.js';
import { planToComponents } from '../export/components.js';
import { formatNote } from '../export/notes.js';
import { checkImage, checkName, checkNamespace, checkSecretName, imageTag, isReleaseVersion, parseApi, parseReplicas } from '../export/options.js';
import { defaultImage, render } from '../export/render.js';
import { checkManifest } from '../export/schema.js';

export interface ExportK8sOptions {
  model?: string;
  set?: string[];
  api?: string;
  image?: string;
  name?: string;
  namespace?: string;
  replicas?: string[];
  /** A name, or false for --no-hf-secret. */
  hfSecret?: string | false;
  output?: string;
  force?: boolean;
  json?: boolean;
}

/** Importing dynamo alone takes about a second; a broken environment must not hang the export. */
const PROBE_TIMEOUT_MS = 15_000;

/** `dynamo-dev export k8s [RECIPE]`: the recipe's plan as one DynamoGraphDeployment (CLI.md). */
/** What a cluster's mocker serves in place of the embedded model: a small public model's tokenizer. */
const CLUSTER_MOCKER_MODEL = 'Qwen/Qwen3-0.6B';

export default async function exportK8s(ctx: CommandContext, recipeRef: string | undefined, opts: ExportK8sOptions): Promise<number> {
  // Every flag first: bad input costs nothing and writes nothing.
  const api = parseApi(opts.api);
  const replicas = parseReplicas(opts.replicas ?? []);
  const name = opts.name === undefined ? undefined : checkName(opts.name);
  const namespace = opts.namespace === undefined ? undefined : checkNamespace(opts.namespace);
  const hfSecret = opts.hfSecret === false ? null : checkSecretName(opts.hfSecret ?? 'hf-token-secret');
  const givenImage = opts.image === undefined ? undefined : checkImage(opts.image);
  if (opts.output !== undefined) await (await import('../host/files/output-file.js')).checkOutputFile(opts.output, Boolean(opts.force));

  const ref = recipeRef ?? 'agg';
  const sets = [...(opts.set ?? [])];
  if (opts.model !== undefined) sets.push(`model=${JSON.stringify(opts.model)}`);
  let recipe = await loadRecipe(ref, sets);
  // The embedded model is a folder of this machine: pods download a model by Hugging Face id, so
  // the manifest names the model the mocker recipe named before it had one of its own.
  const { EMBEDDED_MODEL, isEmbeddedModel } = await import('../plan/embedded-model.js');
  const swapped = isEmbeddedModel(recipe.model);
  if (swapped) recipe = { ...recipe, model: CLUSTER_MOCKER_MODEL };
  const python = (await (await import('../host/python/python.js')).resolvePython({ given: ctx.python, release: ctx.release, recipePython: recipe.python, engine: recipe.engine, device: recipe.device, env: ctx.env })).interpreter;
  const dir = runDir(ctx.stateDir, newRunId(recipe.name));
  // The same validated plan as `up` (no GPU facts: the cluster's GPUs are not this machine's).
  const plan = buildPlan({ recipe, runDir: dir, python, source: ref });
  const home = ctx.env.HOME || homedir();
  const model = planToComponents({
    plan, recipe, name, replicas, hfSecret,
    markers: { paths: [dir, ctx.stateDir, ...(home && home !== '/' ? [home] : [])] },
  });

  const image = givenImage ?? (await installedImage(ctx, python, recipe.engine));
  const rendered = render(api, model, { image, namespace });
  const problems = checkManifest(rendered.doc, api);
  if (problems.length > 0) throw new Error(`export: the manifest breaks the ${api} CRD schema: ${problems[0]}`);

  let text: string;
  if (ctx.json) text = `${JSON.stringify(rendered.doc, null, 2)}\n`;
  else {
    const { toYaml, headerLines } = await import('../export/yaml.js');
    text = toYaml(rendered, headerLines(model, rendered));
  }
  const notes = model.notes.map(formatNote);
  if (swapped) notes.unshift(formatNote({ who: 'model', from: EMBEDDED_MODEL, to: CLUSTER_MOCKER_MODEL, why: 'the embedded model is a folder on this machine; pods download by Hugging Face id; --model to choose another' }));
  const tag = imageTag(image);
  if (givenImage !== undefined && (tag === null || !isReleaseVersion(tag))) {
    notes.push(`note: image ${image} has no X.Y.Z tag; newer operators then want runtimeVersionOverride on each component (docs/export.md)`);
  }

  if (opts.output !== undefined) {
    await (await import('../host/files/output-file.js')).writeOutputFile(opts.output, text, Boolean(opts.force));
  } else {
    ctx.stdout.write(text);
  }
  for (const n of notes) ctx.stderr.write(`${n}\n`);
  if (opts.output !== undefined) {
    ctx.stderr.write(`wrote ${opts.output}: kubectl apply -f ${opts.output}${namespace ? ` -n ${namespace}` : ''}\n`);
  }
  return EXIT.ok;
}

/** nvcr.io/nvidia/ai-dynamo/<runtime>:<the Dynamo version the Python probe finds>. */
async function installedImage(ctx: CommandContext, python: string, engine: 'vllm' | 'mocker'): Promise<string> {
  const { probePython } = await import('../host/python/python.js');
  const facts = await probePython(python, engine, ctx.env, PROBE_TIMEOUT_MS, ['dynamo']);
  const dyn = facts.modules.dynamo;
  const fix = `pass --image ${defaultImage(engine, '<Dynamo version>')}`;
  if (!facts.ok || !dyn?.ok) {
    // The Dynamo `setup` installed names the version too, whichever engine it was set up for
    // (issue 31: with only a mocker environment, `export k8s agg` asked for --image).
    const [{ listManagedEnvs }, { compareVersions }] = await Promise.all([import('../host/python/managed-env.js'), import('../plan/dynamo-releases.js')]);
    const newest = listManagedEnvs(ctx.env).map((e) => e.marker.release).filter(isReleaseVersion).sort(compareVersions).pop();
    if (newest) return defaultImage(engine, newest);
  }
  if (!facts.ok) throw new UserError(`no --image and no Dynamo version: ${facts.error}; ${fix}`);
  if (!dyn?.ok) throw new UserError(`no --image and no Dynamo in ${python} (${dyn?.error ?? 'not importable'}); ${fix}`);
  if (!dyn.version) throw new UserError(`no --image and ${python}'s dynamo reports no version; ${fix}`);
  if (!isReleaseVersion(dyn.version)) {
    throw new UserError(`no --image, and the installed Dynamo ${dyn.version} is not a release with a published image; ${fix}`);
  }
  return defaultImage(engine, dyn.version);
}
