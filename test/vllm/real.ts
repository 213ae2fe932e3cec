import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

// Calls into the installed ai-dynamo[vllm] of the tier's venv (test/vllm/*.py run by its python).

/** test/vllm, where the Python helpers are. */
export const HERE = dirname(fileURLToPath(import.meta.url));

export const vllmPython = (): string => inject('vllmPython');

/** The environment the venv's python runs in: offline, no colour unless asked, no stray PYTHONPATH. */
export function pyEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, HF_HUB_OFFLINE: '1', PYTHONDONTWRITEBYTECODE: '1', ...extra };
}

/** Runs test/vllm/SCRIPT with the venv's python, JSON in on stdin, the JSON document it prints out. */
export function runPy<T>(script: string, input: unknown, env: Record<string, string> = {}): T {
  const out = execFileSync(vllmPython(), [join(HERE, script)], {
    input: JSON.stringify(input), encoding: 'utf8', env: pyEnv(env), maxBuffer: 64 * 1024 * 1024, stdio: ['pipe', 'pipe', 'pipe'],
  });
  return JSON.parse(out.trim().split('\n').pop()!) as T;
}

export interface ParseAnswer {
  results: { ok: boolean; error?: string }[];
  flags: Record<'dynamo.vllm' | 'dynamo.frontend', string[]>;
}

/** The real parsers' verdict on each argv, and every flag they know (test/vllm/real-parse.py). */
export const realParse = (argvs: { module: string; args: string[] }[]): ParseAnswer => runPy<ParseAnswer>('real-parse.py', { argvs });
