import type { CommandContext } from './context.js';
import { EXIT } from './context.js';

/** `dynamo-dev bench list`: the stored results, newest first. */
export default async function benchList(ctx: CommandContext): Promise<number> {
  const [{ listBenchResults }, { listedResult, renderBenchList }] = await Promise.all([import('../run/bench-store.js'), import('../ui/bench-list.js')]);
  const items = await listBenchResults(ctx.stateDir, listedResult);
  if (ctx.json) ctx.stdout.write(`${JSON.stringify({ results: items }, null, 2)}\n`);
  else ctx.stdout.write(renderBenchList(items, ctx.interactive ? ctx.stdout.columns ?? 80 : null));
  return EXIT.ok;
}
