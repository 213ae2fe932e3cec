import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { ensureVenv } from '../dynamo/venv.mjs';

// Once per `npm run test:nixl`: the cached venv of test/nixl/requirements.txt (the real NIXL 1.4.1
// with its bundled UCX 1.22.0; ~285 MB, built in seconds on first use).

declare module 'vitest' {
  export interface ProvidedContext {
    nixlPython: string;
  }
}

export const NIXL_PIN_FILE = join(dirname(fileURLToPath(import.meta.url)), 'requirements.txt');

export default function setup(project: TestProject): void {
  const { python } = ensureVenv({ pinFile: NIXL_PIN_FILE, label: 'test:nixl', importCheck: ['nixl._api'] });
  project.provide('nixlPython', python);
}
