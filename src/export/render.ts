import type { ApiVersion } from './api-version.js';
import type { EnvVar, ExportComponent, ExportModel } from './components.js';

// ExportModel -> a DynamoGraphDeployment of one API version. Field names, nesting and types come
// from the operator's CRD, ai-dynamo/dynamo
// deploy/operator/config/crd/bases/nvidia.com_dynamographdeployments.yaml (read at commit
// 01cc1c3b677b20c5dd72d9eb76962dc04b55b8be; v1beta1 served and stored, v1alpha1 served and
// deprecated), and the shapes of upstream's examples/backends/vllm/deploy/{,v1beta1/}*.yaml and
// examples/backends/mocker/deploy/{,v1beta1/}agg.yaml, which the templates shipped in the
// ai-dynamo 1.6.1 wheel (dynamo/profiler/templates/dgd/{vllm,mocker}/*.yaml: v1beta1, prefill and
// decode types, dynamo-planner for the mocker) agree with. schema.ts checks the result against the
// same CRD.

export { API_VERSIONS, DEFAULT_API, type ApiVersion } from './api-version.js';

export interface RenderOptions {
  image: string;
  namespace?: string;
}

/** A comment for the YAML form, at a path into the document. */
export interface PathComment {
  path: (string | number)[];
  text: string;
}

export interface Rendered {
  api: ApiVersion;
  doc: Record<string, unknown>;
  comments: PathComment[];
}

/** Upstream's image tags are Dynamo releases; the mocker has no runtime image of its own. */
export function defaultImage(engine: 'vllm' | 'mocker', dynamoVersion: string): string {
  // examples/backends/mocker/deploy/v1beta1/agg.yaml: "There is no dedicated mocker-runtime image.
  // The published dynamo-planner image includes ... what python3 -m dynamo.mocker needs."
  const repo = engine === 'mocker' ? 'dynamo-planner' : 'vllm-runtime';
  return `nvcr.io/nvidia/ai-dynamo/${repo}:${dynamoVersion}`;
}

export function render(api: ApiVersion, model: ExportModel, opts: RenderOptions): Rendered {
  return api === 'v1beta1' ? renderV1beta1(model, opts) : renderV1alpha1(model, opts);
}

const envList = (env: EnvVar[]) => env.map((e) => ({ name: e.name, value: e.value }));

/** The document around the components; graph-wide env is `spec.env` in v1beta1, `spec.envs` in v1alpha1. */
function dgd(
  api: ApiVersion, model: ExportModel, opts: RenderOptions, envKey: 'env' | 'envs', parts: Record<string, unknown>, comments: PathComment[],
): Rendered {
  const spec: Record<string, unknown> = {
    // spec.backendFramework is an enum of sglang, vllm, trtllm: the mocker is none of them.
    ...(model.engine === 'vllm' ? { backendFramework: 'vllm' } : {}),
    ...(model.env.length > 0 ? { [envKey]: envList(model.env) } : {}),
    ...parts,
  };
  const metadata = { name: model.name, ...(opts.namespace ? { namespace: opts.namespace } : {}) };
  return { api, doc: { apiVersion: `nvidia.com/${api}`, kind: 'DynamoGraphDeployment', metadata, spec }, comments };
}

/**
 * v1beta1: spec.components is a list (name, type, replicas, podTemplate); the container named
 * "main" carries image, command, args, env, envFrom and resources (a plain corev1 PodTemplateSpec).
 * Types frontend | worker | prefill | decode are first-class (CRD enum).
 */
function renderV1beta1(model: ExportModel, opts: RenderOptions): Rendered {
  const comments: PathComment[] = [];
  const components = model.components.map((c, i) => {
    const container: Record<string, unknown> = { name: 'main', image: opts.image };
    if (c.command) container.command = c.command;
    if (c.args.length > 0) container.args = c.args;
    if (c.env.length > 0) container.env = envList(c.env);
    if (c.hfSecret) container.envFrom = [{ secretRef: { name: c.hfSecret } }];
    if (c.gpus > 0) container.resources = { limits: { 'nvidia.com/gpu': String(c.gpus) } };
    for (const [j, text] of Object.entries(c.argComments)) {
      comments.push({ path: ['spec', 'components', i, 'podTemplate', 'spec', 'containers', 0, 'args', Number(j)], text });
    }
    return { name: c.name, type: v1beta1Type(c), replicas: c.replicas, podTemplate: { spec: { containers: [container] } } };
  });
  return dgd('v1beta1', model, opts, 'env', { components }, comments);
}

function v1beta1Type(c: ExportComponent): string {
  if (c.role === 'frontend') return 'frontend';
  return c.role === 'agg' ? 'worker' : c.role;
}

/**
 * v1alpha1: spec.services is a map from service name to componentType (frontend | worker) with
 * subComponentType prefill | decode, replicas, resources.limits.gpu (a string), envs,
 * envFromSecret and extraPodSpec.mainContainer (image, command, args).
 */
function renderV1alpha1(model: ExportModel, opts: RenderOptions): Rendered {
  const comments: PathComment[] = [];
  const services: Record<string, unknown> = {};
  for (const c of model.components) {
    const svc: Record<string, unknown> = { componentType: c.role === 'frontend' ? 'frontend' : 'worker' };
    if (c.role === 'prefill' || c.role === 'decode') svc.subComponentType = c.role;
    svc.replicas = c.replicas;
    if (c.hfSecret) svc.envFromSecret = c.hfSecret;
    if (c.gpus > 0) svc.resources = { limits: { gpu: String(c.gpus) } };
    if (c.env.length > 0) svc.envs = envList(c.env);
    const main: Record<string, unknown> = { image: opts.image };
    if (c.command) main.command = c.command;
    if (c.args.length > 0) main.args = c.args;
    svc.extraPodSpec = { mainContainer: main };
    for (const [j, text] of Object.entries(c.argComments)) {
      comments.push({ path: ['spec', 'services', c.name, 'extraPodSpec', 'mainContainer', 'args', Number(j)], text });
    }
    services[c.name] = svc;
  }
  return dgd('v1alpha1', model, opts, 'envs', { services }, comments);
}
