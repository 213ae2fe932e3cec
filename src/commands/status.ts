import type { CommandContext } from './context.js';
import { refuseConflicts } from './conflicts.js';
import { warnIfProcIsForeign } from './proc-warning.js';
import { collectStatus } from '../run/status-doc.js';
import { printableDeep } from '../ui/printable.js';
import { formatStatus } from '../ui/status-table.js';

export interface StatusOptions {
  run?: string;
  all?: boolean;
  json?: boolean;
}

/** `status`: live and recent runs; always exit 0 (it reports, it does not judge). */
export default async function status(ctx: CommandContext, opts: StatusOptions = {}): Promise<number> {
  refuseConflicts({ ...opts }, [{ a: ['run', '--run'], b: ['all', '--all'], why: '--run shows one run, --all every run; choose one' }]);
  warnIfProcIsForeign(ctx);
  const docs = await collectStatus(ctx.stateDir, { runId: opts.run, all: opts.all, env: ctx.env });
  // A run supervised in another pid namespace: said, not called orphaned (status-doc.ts).
  const { pidNamespaceWarning } = await import('../run/status-doc.js');
  for (const d of docs) {
    const w = pidNamespaceWarning(d);
    if (w) ctx.stderr.write(`dynamo-dev: warning: ${w}\n`);
  }
  // Records that could not be read: a live run may hide behind one (its processes carry its marker).
  const { unreadableRuns, unreadableLine } = await import('../run/unreadable-runs.js');
  const unreadable = opts.run ? [] : await unreadableRuns(ctx.stateDir);
  if (ctx.json) {
    ctx.stdout.write(`${JSON.stringify({ runs: docs, ...(unreadable.length ? { unreadable } : {}) }, null, 2)}\n`);
    return 0;
  }
  // What a run.json says (recipe, model, frontend URL, names) is anyone's who can write the state
  // directory: made printable before it reaches the terminal (--json keeps it as stored).
  const shownDocs = printableDeep(docs);
  const tty = Boolean((ctx.stdout as NodeJS.WriteStream).isTTY);
  const columns = tty ? ctx.stdout.columns || Infinity : Infinity;
  // The GPU picture of each run shown in full: its plan's shares with the KV each worker measured.
  const gpu: Record<string, string | null> = {};
  const shown = opts.run ? shownDocs : shownDocs.filter((d) => d.live);
  if (shown.length > 0) {
    const [{ readRun }, { gpuPicture, formatGpuPicture }] = await Promise.all([import('../run/state.js'), import('../ui/gpu-bar.js')]);
    for (const d of shown) {
      const rec = printableDeep(await readRun(ctx.stateDir, d.id).catch(() => null));
      const pic = rec?.plan ? gpuPicture(rec.plan, Object.fromEntries(d.processes.map((p) => [p.name, p.kvTokens]))) : null;
      gpu[d.id] = pic ? formatGpuPicture(pic, { width: Number.isFinite(columns) ? columns : 100, fancy: tty, indent: '  ' }) : null;
    }
  }
  const { wrapWords } = await import('../ui/fit.js');
  const said = unreadable.map((u) => `${wrapWords(unreadableLine(printableDeep(u)), columns, '  ').join('\n')}\n`).join('');
  // Never "no runs recorded" over a record that could not be read.
  if (docs.length === 0 && said) ctx.stdout.write(said);
  else ctx.stdout.write(formatStatus(shownDocs, { stateDir: ctx.stateDir, single: Boolean(opts.run), now: Date.now(), columns, gpu }) + (said ? `\n${said}` : ''));
  return 0;
}
