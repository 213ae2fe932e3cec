import { UserError } from '../errors.js';

// `--device gpu|cpu` on up, doctor and bench: the recipe's `device` field, said as a flag (one way
// for every command: the flag is `--set device=...`, and a run records it in its plan).

export type Device = 'gpu' | 'cpu';

/** The --set value for --device, [] without one; anything else is bad input (exit 2). */
export function deviceSets(device: string | undefined): string[] {
  if (device === undefined) return [];
  if (device !== 'gpu' && device !== 'cpu') throw new UserError(`--device: "${device}" is not a device; use gpu or cpu (vLLM's CPU build: --device cpu)`);
  return [`device=${device}`];
}
