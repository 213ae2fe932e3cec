import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { ensureVenv, makeModel } from '../dynamo/venv.mjs';

// Once per `npm run test:vllm`: the cached venv of test/vllm/requirements.txt (ai-dynamo[vllm] of
// the pinned release; built on first use, ~10 GB, a quarter of an hour on a cold machine) and the
// tiny model folder of test/dynamo/make-model.py (a real qwen3 config and tokenizer, no weights).

declare module 'vitest' {
  export interface ProvidedContext {
    vllmPython: string;
    /** The tiny model as a local folder. */
    vllmModelDir: string;
  }
}

export const VLLM_PIN_FILE = join(dirname(fileURLToPath(import.meta.url)), 'requirements.txt');

export default function setup(project: TestProject): () => void {
  const { python } = ensureVenv({
    pinFile: VLLM_PIN_FILE,
    label: 'test:vllm',
    importCheck: ['dynamo.frontend', 'dynamo.vllm', 'vllm', 'torch'],
  });
  const root = mkdtempSync(join(tmpdir(), 'dd-vllm-'));
  const model = makeModel(python, join(root, 'tiny'));
  project.provide('vllmPython', python);
  project.provide('vllmModelDir', model.folder);
  return () => rmSync(root, { recursive: true, force: true });
}
