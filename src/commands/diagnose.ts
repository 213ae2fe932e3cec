import type { CommandContext } from './context.js';

// Placeholder until the command lands.
export default async function diagnose(ctx: CommandContext): Promise<number> {
  ctx.stderr.write('dynamo-dev: diagnose is not implemented yet\n');
  return 1;
}
