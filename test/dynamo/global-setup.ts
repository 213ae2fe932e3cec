import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureVenv, makeModel } from './venv.mjs';

// Once per `npm run test:dynamo`: the cached venv with the released Dynamo (built on first use),
// and a tiny model folder built now, offline: as a local folder, and as the Hugging Face cache
// entry of the model the built-in recipes name, so `up mocker` runs unchanged with HF_HUB_OFFLINE=1.

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoPython: string;
    /** The tiny model as a local folder. */
    modelDir: string;
    /** HF_HUB_CACHE in which Qwen/Qwen3-0.6B is the tiny model. */
    hubCache: string;
  }
}

export const HUB_MODEL = 'Qwen/Qwen3-0.6B';

export default function setup(project: TestProject): () => void {
  const { python } = ensureVenv();
  const root = mkdtempSync(join(tmpdir(), 'dd-dynamo-'));
  const hubCache = join(root, 'hf', 'hub');
  const model = makeModel(python, join(root, 'tiny'), { cache: hubCache, repoId: HUB_MODEL });
  project.provide('dynamoPython', python);
  project.provide('modelDir', model.folder);
  project.provide('hubCache', hubCache);
  return () => rmSync(root, { recursive: true, force: true });
}
