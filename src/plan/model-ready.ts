// The frontend's per-model readiness URL (1.6+: GET /v1/models/<model>/ready). Pure.

/**
 * The frontend's /v1/models/<model>/ready takes the id as path segments; an id that starts with
 * "/" (a local model folder) is not found there (observed on 1.6.1: 404, while "org/name" ids
 * answer), so such runs count workers from /health instead.
 */
export function modelInPath(model: string): boolean {
  return !model.startsWith('/');
}

/** The URL to ask, or null for an id the endpoint cannot address. */
export function modelReadyUrl(frontendUrl: string, model: string): string | null {
  return modelInPath(model) ? `${frontendUrl}/v1/models/${encodeURIComponent(model)}/ready` : null;
}
