import type { CommandContext } from './context.js';
import { checkPlot, printStored, refuseUnplottable, terminalOf, type StoredOptions } from './bench-stored.js';

/** `dynamo-dev bench show ID`: a stored result rendered again, byte-identical for the same document. */
export default async function benchShow(ctx: CommandContext, id: string, opts: StoredOptions): Promise<number> {
  await checkPlot(opts);
  const [{ readBenchResult }, { renderResult }, { printableDeep }] = await Promise.all([import('../run/bench-store.js'), import('../ui/bench-render.js'), import('../ui/printable.js')]);
  const doc = await readBenchResult(ctx.stateDir, id);
  refuseUnplottable(opts.plot, doc.variants.length);
  // The text and the plot from the document made printable; --json the document as stored.
  return printStored(ctx, doc, renderResult(printableDeep(doc), await terminalOf(ctx)), opts);
}
