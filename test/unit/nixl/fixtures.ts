import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from '../../helpers/cli.js';
import { readNixlProbe, type NixlProbeFacts } from '../../../src/host/ucx/nixl-probe.js';

/** The recorded output of the real NIXL 1.4.1 probe under one setting (test/fixtures/nixl/README.md). */
export const recording = (name: string): string => readFileSync(join(FIXTURES, 'nixl', `${name}.txt`), 'utf8');

/** The settings of each recording. */
export const SETTINGS: Record<string, Record<string, string>> = {
  default: {}, tcp: { UCX_TLS: 'tcp' }, 'shm-self': { UCX_TLS: 'shm,self' }, 'cma-self': { UCX_TLS: 'cma,self' },
  'not-tcp': { UCX_TLS: '^tcp' }, ud: { UCX_TLS: 'ud' }, 'cuda-ipc': { UCX_TLS: 'cuda_ipc' }, 'mm-errh': { UCX_MM_ERROR_HANDLING: 'y' },
  'shm-self-mm-errh': { UCX_TLS: 'shm,self', UCX_MM_ERROR_HANDLING: 'y' },
};

/** The facts the adapter reads from a recording (the whole output was stdout + stderr). */
export function recordedFacts(name: string, over: Partial<Parameters<typeof readNixlProbe>[0]> = {}): NixlProbeFacts {
  const text = recording(name);
  return readNixlProbe({
    python: '/venv/bin/python', stdout: text, stderr: '', exit: text.includes('"stage": "done"') ? 0 : 1, signal: null, startError: null,
    timedOut: false, timeoutMs: 9000, bytes: 4 << 20, env: SETTINGS[name], killedLeftovers: [], elapsedMs: 2400, pgid: 100, ...over,
  });
}
