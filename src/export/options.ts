import { UserError } from '../errors.js';
import { API_VERSIONS, DEFAULT_API, type ApiVersion } from './render.js';

// The flags of `export k8s`, checked before anything is read or written: one line naming the flag
// and what would be valid (exit 2).

export function parseApi(v: string | undefined): ApiVersion {
  if (v === undefined) return DEFAULT_API;
  if ((API_VERSIONS as readonly string[]).includes(v)) return v as ApiVersion;
  throw new UserError(`--api: unknown API version "${v}"; valid: ${API_VERSIONS.join(', ')} (default ${DEFAULT_API})`);
}

/** `--replicas ROLE=N` (repeatable) -> { ROLE: N }; which roles exist is checked against the recipe later. */
export function parseReplicas(values: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) {
    const m = /^([a-z]+)=(\d+)$/.exec(v.trim());
    if (!m) throw new UserError(`--replicas: "${v}" is not ROLE=N (e.g. --replicas agg=4; roles: frontend, agg, prefill, decode)`);
    const n = Number(m[2]);
    if (!Number.isSafeInteger(n) || n < 1 || n > 2 ** 31 - 1) throw new UserError(`--replicas ${m[1]}: N must be a whole number >= 1 (got ${m[2]})`);
    if (m[1] in out) throw new UserError(`--replicas: role "${m[1]}" is given twice`);
    out[m[1]] = n;
  }
  return out;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The DGD's name: the operator derives Service names from it, so a DNS-1035 label. */
export function checkName(v: string): string {
  if (v.length > 63 || !/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(v)) {
    throw new UserError(`--name: "${v}" is not a Kubernetes name (lowercase letters, digits and "-", starting with a letter, at most 63)`);
  }
  return v;
}

export function checkNamespace(v: string): string {
  if (v.length > 63 || !DNS_LABEL.test(v)) {
    throw new UserError(`--namespace: "${v}" is not a Kubernetes namespace (lowercase letters, digits and "-", at most 63)`);
  }
  return v;
}

export function checkSecretName(v: string): string {
  if (v.length > 253 || !DNS_SUBDOMAIN.test(v)) {
    throw new UserError(`--hf-secret: "${v}" is not a Secret name (lowercase letters, digits, "-" and ".", at most 253)`);
  }
  return v;
}

export function checkImage(v: string): string {
  if (!v || /[\s\x00-\x1f\x7f]/.test(v) || v.length > 512) {
    throw new UserError(`--image: "${v}" is not an image reference (e.g. nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1)`);
  }
  return v;
}

/** The tag of an image reference ("repo:tag", "host:5000/repo:tag"), null without one (or a digest only). */
export function imageTag(image: string): string | null {
  const at = image.indexOf('@');
  const ref = at >= 0 ? image.slice(0, at) : image;
  const colon = ref.lastIndexOf(':');
  if (colon < 0 || colon < ref.lastIndexOf('/')) return null;
  return ref.slice(colon + 1) || null;
}

/** A Dynamo release as image tags name it (1.6.1); dev builds (1.7.0.dev0+g1234) have no image. */
export function isReleaseVersion(v: string): boolean {
  return /^\d+\.\d+\.\d+$/.test(v);
}
