// Types of venv.mjs (plain ESM so the benchmarks can import it too).
export const PIN_FILE: string;
export const MATRIX: readonly { release: string; pinFile: string }[];
export const AIPERF_PIN_FILE: string;
export function cacheRoot(env?: NodeJS.ProcessEnv): string;
export function findPython(env?: NodeJS.ProcessEnv): { python: string; version: string };
export function readPins(text?: string): { noDeps: string[]; overrides: string[]; rest: string[] };
export const UV_VERSION: string;
export function findUv(python: string, env?: NodeJS.ProcessEnv, log?: (line: string) => void): string;
export function venvDir(pythonVersionText: string, env?: NodeJS.ProcessEnv, pinText?: string): string;
export function ensureVenv(o?: {
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  /** The pin file (default test/dynamo/requirements.txt). */
  pinFile?: string;
  /** Names the tier in its log lines (default "test:dynamo"). */
  label?: string;
  /** Modules imported once after the install (a broken install fails there). */
  importCheck?: string[];
  /** pip (default) or uv (with the pin file's `# --override` lines: test/engine). */
  installer?: 'pip' | 'uv';
}): { python: string; dir: string; built: boolean };
export function existingVenv(env?: NodeJS.ProcessEnv, pinFile?: string): { python: string; dir: string } | { python: null; why: string };
export function makeModel(venvPython: string, folder: string, hub?: { cache: string; repoId: string }): { folder: string; vocab: number; snapshot: string | null };
