import type { CommandContext } from './context.js';
import { checkPlot, printStored, refuseUnplottable, terminalOf, type StoredOptions } from './bench-stored.js';

/** `dynamo-dev bench compare A B`: two stored results side by side, ratios against A's first measured variant. */
export default async function benchCompare(ctx: CommandContext, a: string, b: string, opts: StoredOptions): Promise<number> {
  await checkPlot(opts);
  const [{ readBenchResult }, { renderComparison }, { printableDeep }] = await Promise.all([import('../run/bench-store.js'), import('../ui/bench-render.js'), import('../ui/printable.js')]);
  const [da, db] = await Promise.all([readBenchResult(ctx.stateDir, a), readBenchResult(ctx.stateDir, b)]);
  refuseUnplottable(opts.plot, da.variants.length + db.variants.length);
  // --json: both whole documents, in the order given.
  return printStored(ctx, { results: [da, db] }, renderComparison(printableDeep(da), printableDeep(db), await terminalOf(ctx)), opts);
}
