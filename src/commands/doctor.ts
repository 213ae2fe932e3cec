import type { CommandContext } from './context.js';

// Placeholder until the command lands.
export default async function doctor(ctx: CommandContext): Promise<number> {
  ctx.stderr.write('dynamo-dev: doctor is not implemented yet\n');
  return 1;
}
