// Types of venv.mjs (plain ESM so the benchmarks can import it too).
export const PIN_FILE: string;
export function cacheRoot(env?: NodeJS.ProcessEnv): string;
export function findPython(env?: NodeJS.ProcessEnv): { python: string; version: string };
export function readPins(text?: string): { noDeps: string[]; rest: string[] };
export function venvDir(pythonVersionText: string, env?: NodeJS.ProcessEnv, pinText?: string): string;
export function ensureVenv(o?: { env?: NodeJS.ProcessEnv; log?: (line: string) => void }): { python: string; dir: string; built: boolean };
export function existingVenv(env?: NodeJS.ProcessEnv): { python: string; dir: string } | { python: null; why: string };
export function makeModel(venvPython: string, folder: string, hub?: { cache: string; repoId: string }): { folder: string; vocab: number; snapshot: string | null };
