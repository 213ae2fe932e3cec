import { foreignProcWarning } from '../run/proc.js';
import type { CommandContext } from './context.js';

/** status, doctor and logs only read: where /proc is another pid namespace's they run, and say first that what they report of processes is that namespace's. */
export function warnIfProcIsForeign(ctx: CommandContext): void {
  const w = foreignProcWarning();
  if (w !== null) ctx.stderr.write(`dynamo-dev: warning: ${w}\n`);
}
