import type { CommandContext } from './context.js';
import { refuseConflicts } from './conflicts.js';
import { collectStatus } from '../run/status-doc.js';
import { formatStatus } from '../ui/status-table.js';

export interface StatusOptions {
  run?: string;
  all?: boolean;
  json?: boolean;
}

/** `status`: live and recent runs; always exit 0 (it reports, it does not judge). */
export default async function status(ctx: CommandContext, opts: StatusOptions = {}): Promise<number> {
  refuseConflicts({ ...opts }, [{ a: ['run', '--run'], b: ['all', '--all'], why: '--run shows one run, --all every run; choose one' }]);
  const docs = await collectStatus(ctx.stateDir, { runId: opts.run, all: opts.all });
  if (ctx.json) {
    ctx.stdout.write(`${JSON.stringify({ runs: docs }, null, 2)}\n`);
    return 0;
  }
  ctx.stdout.write(formatStatus(docs, { stateDir: ctx.stateDir, single: Boolean(opts.run), now: Date.now() }));
  return 0;
}
