import type { ApiVersion } from './api-version.js';

/** spec.components maxItems (v1beta1) and spec.services maxProperties (v1alpha1) in the operator's CRDs. */
export const MAX_COMPONENTS = 25;

// A checker for the subset of the DynamoGraphDeployment CRD that export writes. Every rule here is
// read from ai-dynamo/dynamo deploy/operator/config/crd/bases/nvidia.com_dynamographdeployments.yaml
// (commit 01cc1c3b677b20c5dd72d9eb76962dc04b55b8be), versions v1beta1 and v1alpha1. Strict on
// purpose: a field the CRD does not have (a typo) is an error, not pruned silently by the API server.
// Used by tests on every exported manifest and by `export k8s` itself before it writes anything.

type Check = (v: unknown, path: string, out: string[]) => void;

const typeName = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);

function str(o: { pattern?: RegExp; enum?: readonly string[]; min?: number; max?: number } = {}): Check {
  return (v, path, out) => {
    if (typeof v !== 'string') return void out.push(`${path}: must be a string, got ${typeName(v)}`);
    if (o.min !== undefined && v.length < o.min) out.push(`${path}: must have at least ${o.min} characters`);
    if (o.max !== undefined && v.length > o.max) out.push(`${path}: must have at most ${o.max} characters`);
    if (o.pattern && !o.pattern.test(v)) out.push(`${path}: "${v}" does not match ${o.pattern.source}`);
    if (o.enum && !o.enum.includes(v)) out.push(`${path}: "${v}" is not one of ${o.enum.join(', ')}`);
  };
}

/** format int32, with the CRD's minimum. */
function int32(min: number): Check {
  return (v, path, out) => {
    if (typeof v !== 'number' || !Number.isInteger(v)) return void out.push(`${path}: must be an integer, got ${typeName(v)}`);
    if (v < min || v > 2 ** 31 - 1) out.push(`${path}: ${v} is outside ${min}..${2 ** 31 - 1}`);
  };
}

function list(item: Check, o: { min?: number; max?: number } = {}): Check {
  return (v, path, out) => {
    if (!Array.isArray(v)) return void out.push(`${path}: must be a list, got ${typeName(v)}`);
    if (o.min !== undefined && v.length < o.min) out.push(`${path}: needs at least ${o.min} item(s)`);
    if (o.max !== undefined && v.length > o.max) out.push(`${path}: has ${v.length} items, at most ${o.max}`);
    v.forEach((x, i) => item(x, `${path}[${i}]`, out));
  };
}

function obj(props: Record<string, Check>, required: string[] = []): Check {
  return (v, path, out) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return void out.push(`${path}: must be an object, got ${typeName(v)}`);
    const o = v as Record<string, unknown>;
    for (const r of required) if (!(r in o)) out.push(`${path}.${r}: is required`);
    for (const [k, x] of Object.entries(o)) {
      const check = props[k];
      if (!check) out.push(`${path}.${k}: not a field of the CRD (or not one export writes)`);
      else check(x, `${path}.${k}`, out);
    }
  };
}

function map(value: Check, o: { maxProperties?: number; key?: RegExp } = {}): Check {
  return (v, path, out) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return void out.push(`${path}: must be a map, got ${typeName(v)}`);
    const entries = Object.entries(v as Record<string, unknown>);
    if (o.maxProperties !== undefined && entries.length > o.maxProperties) out.push(`${path}: has ${entries.length} entries, at most ${o.maxProperties}`);
    for (const [k, x] of entries) {
      if (o.key && !o.key.test(k)) out.push(`${path}: key "${k}" does not match ${o.key.source}`);
      value(x, `${path}.${k}`, out);
    }
  };
}

function literal(want: string): Check {
  return (v, path, out) => {
    if (v !== want) out.push(`${path}: must be "${want}", got ${JSON.stringify(v)}`);
  };
}

function all(...checks: Check[]): Check {
  return (v, path, out) => checks.forEach((c) => c(v, path, out));
}

/** A resource quantity: integer or string matching the CRD's quantity pattern. */
const QUANTITY = /^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/;
const quantity: Check = (v, path, out) => {
  if (typeof v === 'number' && Number.isInteger(v)) return;
  str({ pattern: QUANTITY })(v, path, out);
};

/** corev1.EnvVar: name required, value a string (valueFrom is not written). */
const envVar = obj({ name: str({ min: 1, pattern: /^[^=]+$/ }), value: str() }, ['name']);
const envVars = all(list(envVar), uniqueBy('name'));
const strings = list(str());

function uniqueBy(key: string, fold = false): Check {
  return (v, path, out) => {
    if (!Array.isArray(v)) return;
    const seen = new Set<string>();
    for (const x of v) {
      const raw = (x as Record<string, unknown>)?.[key];
      if (typeof raw !== 'string') continue;
      const k = fold ? raw.toLowerCase() : raw;
      if (seen.has(k)) out.push(`${path}: ${key} "${raw}" appears twice${fold ? ' (names must be unique case-insensitively)' : ''}`);
      seen.add(k);
    }
  };
}

/** metadata.name: the operator derives Service names from it, so a DNS-1035 label. */
const metadata = obj({
  name: str({ min: 1, max: 63, pattern: /^[a-z]([-a-z0-9]*[a-z0-9])?$/ }),
  namespace: str({ min: 1, max: 63, pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/ }),
}, ['name']);

const BACKENDS = ['sglang', 'vllm', 'trtllm'] as const;
const SECRET_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** v1beta1 components[].podTemplate.spec.containers[]: corev1.Container, name required. */
const v1beta1Container = obj({
  name: str({ min: 1, pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/ }),
  image: str({ min: 1 }),
  command: strings,
  args: strings,
  env: envVars,
  envFrom: list(obj({ secretRef: obj({ name: str({ min: 1, pattern: SECRET_NAME }), optional: (v, p, o) => void (typeof v !== 'boolean' && o.push(`${p}: must be a boolean`)) }, ['name']) })),
  resources: obj({ limits: map(quantity), requests: map(quantity) }),
}, ['name']);

/** "New components must include a container named main with a non-empty image" (podTemplate description). */
const hasMain: Check = (v, path, out) => {
  if (!Array.isArray(v)) return;
  const main = v.filter((c) => (c as Record<string, unknown>)?.name === 'main');
  if (main.length !== 1) out.push(`${path}: needs exactly one container named "main", has ${main.length}`);
};

const v1beta1Component = obj({
  name: str({ min: 1, max: 63, pattern: /^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$/ }),
  type: str({ enum: ['frontend', 'worker', 'prefill', 'decode', 'planner', 'epp'] }),
  replicas: int32(0),
  podTemplate: obj({
    spec: obj({ containers: all(list(v1beta1Container, { min: 1 }), uniqueBy('name'), hasMain) }, ['containers']),
  }),
}, ['name']);

const v1beta1 = obj({
  apiVersion: literal('nvidia.com/v1beta1'),
  kind: literal('DynamoGraphDeployment'),
  metadata,
  spec: obj({
    backendFramework: str({ enum: BACKENDS }),
    env: envVars,
    components: all(list(v1beta1Component, { max: MAX_COMPONENTS }), uniqueBy('name', true)),
  }),
}, ['apiVersion', 'kind', 'metadata', 'spec']);

/** v1alpha1 services.<name>.resources.limits: the operator's ResourceItem, all strings. */
const resourceItem = obj({ cpu: str(), memory: str(), gpu: str({ pattern: /^[0-9]+$/ }), gpuType: str(), custom: map(str()) });

const v1alpha1Service = obj({
  // A plain string in the CRD; the operator acts on these values (frontend detection, prefill/decode).
  componentType: str({ enum: ['frontend', 'worker', 'planner', 'epp'] }),
  subComponentType: str({ enum: ['prefill', 'decode'] }),
  replicas: int32(0),
  envFromSecret: str({ min: 1, pattern: SECRET_NAME }),
  envs: envVars,
  resources: obj({ requests: resourceItem, limits: resourceItem }),
  extraPodSpec: obj({
    mainContainer: obj({ image: str({ min: 1 }), command: strings, args: strings }, ['image']),
  }),
});

const v1alpha1 = obj({
  apiVersion: literal('nvidia.com/v1alpha1'),
  kind: literal('DynamoGraphDeployment'),
  metadata,
  spec: obj({
    backendFramework: str({ enum: BACKENDS }),
    envs: envVars,
    // maxProperties 25 is the CRD's; the key rule is ours (v1beta1's component-name pattern), since
    // the operator names resources after the key.
    services: map(v1alpha1Service, { maxProperties: MAX_COMPONENTS, key: /^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$/ }),
  }),
}, ['apiVersion', 'kind', 'metadata', 'spec']);

/** Problems with a manifest against the CRD of its version; empty when it conforms. */
export function checkManifest(doc: unknown, api: ApiVersion): string[] {
  const out: string[] = [];
  (api === 'v1beta1' ? v1beta1 : v1alpha1)(doc, '', out);
  return out.map((p) => p.replace(/^\./, ''));
}
