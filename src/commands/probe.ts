import type { CommandContext } from './context.js';

// Placeholder until the command lands.
export default async function probe(ctx: CommandContext): Promise<number> {
  ctx.stderr.write('dynamo-dev: probe is not implemented yet\n');
  return 1;
}
