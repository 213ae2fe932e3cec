import chalk from 'chalk';
import { listBuiltinRecipes } from '../host/recipes.js';
import type { CommandContext } from './context.js';

export default async function recipes(ctx: CommandContext): Promise<number> {
  const list = await listBuiltinRecipes();
  if (ctx.json) {
    ctx.stdout.write(`${JSON.stringify({ recipes: list.map(({ name, description }) => ({ name, description })) })}\n`);
    return 0;
  }
  const w = Math.max(...list.map((r) => r.name.length));
  for (const r of list) ctx.stdout.write(`${chalk.bold(r.name.padEnd(w))}  ${r.description}\n`);
  ctx.stdout.write(`\n${chalk.dim('dynamo-dev recipes show NAME  prints one; dynamo-dev up NAME starts it')}\n`);
  return 0;
}
