import type { CommandContext } from './context.js';

// Placeholder until the command lands.
export default async function logs(ctx: CommandContext): Promise<number> {
  ctx.stderr.write('dynamo-dev: logs is not implemented yet\n');
  return 1;
}
