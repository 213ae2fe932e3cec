import type { CommandContext } from './context.js';
import { checkPlot, printStored, terminalOf, type StoredOptions } from './bench-stored.js';

/** `dynamo-dev bench show ID`: a stored result rendered again, byte-identical for the same document. */
export default async function benchShow(ctx: CommandContext, id: string, opts: StoredOptions): Promise<number> {
  await checkPlot(opts);
  const [{ readBenchResult }, { renderResult }] = await Promise.all([import('../run/bench-store.js'), import('../bench/render.js')]);
  const doc = await readBenchResult(ctx.stateDir, id);
  return printStored(ctx, doc, renderResult(doc, await terminalOf(ctx)), opts);
}
