import type { CommandContext } from './context.js';

// Placeholder until the command lands.
export default async function status(ctx: CommandContext): Promise<number> {
  ctx.stderr.write('dynamo-dev: status is not implemented yet\n');
  return 1;
}
