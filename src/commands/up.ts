import type { CommandContext } from './context.js';

// Placeholder until the command lands.
export default async function up(ctx: CommandContext): Promise<number> {
  ctx.stderr.write('dynamo-dev: up is not implemented yet\n');
  return 1;
}
