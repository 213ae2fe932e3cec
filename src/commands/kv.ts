import type { CommandContext } from './context.js';

// Placeholder until the command lands.
export default async function kv(ctx: CommandContext): Promise<number> {
  ctx.stderr.write('dynamo-dev: kv is not implemented yet\n');
  return 1;
}
