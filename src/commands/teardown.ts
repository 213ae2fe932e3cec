import type { CommandContext } from './context.js';

// Placeholder until the command lands.
export default async function teardown(ctx: CommandContext): Promise<number> {
  ctx.stderr.write('dynamo-dev: teardown is not implemented yet\n');
  return 1;
}
