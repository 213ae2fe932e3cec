import type { CommandContext } from './context.js';
import { EXIT } from './context.js';

/** `dynamo-dev bench list`: the stored results, newest first. */
export default async function benchList(ctx: CommandContext): Promise<number> {
  const [{ listBenchResults }, { listedResult, renderBenchList }, { printableDeep }] = await Promise.all([import('../run/bench-store.js'), import('../ui/bench-list.js'), import('../ui/printable.js')]);
  // Each row from its document made printable (no escape sequence of a stored result reaches the terminal).
  const items = await listBenchResults(ctx.stateDir, (l) => listedResult(printableDeep(l)));
  if (ctx.json) ctx.stdout.write(`${JSON.stringify({ results: items }, null, 2)}\n`);
  else ctx.stdout.write(renderBenchList(items, ctx.interactive ? ctx.stdout.columns ?? 80 : null));
  return EXIT.ok;
}
