import chalk from 'chalk';
import { listBuiltinRecipes } from '../host/files/recipes.js';
import { wrapWords } from '../ui/fit.js';
import type { CommandContext } from './context.js';

export default async function recipes(ctx: CommandContext): Promise<number> {
  const list = await listBuiltinRecipes();
  if (ctx.json) {
    ctx.stdout.write(`${JSON.stringify({ recipes: list.map(({ name, description }) => ({ name, description })) })}\n`);
    return 0;
  }
  // A terminal's width: descriptions wrap at word boundaries under their own column; piped, whole lines.
  const columns = (ctx.stdout as NodeJS.WriteStream).isTTY ? (ctx.stdout.columns || Infinity) : Infinity;
  const w = Math.max(...list.map((r) => r.name.length));
  const gutter = ' '.repeat(w + 2);
  for (const r of list) {
    const lines = columns - gutter.length >= 30
      ? wrapWords(`${chalk.bold(r.name.padEnd(w))}  ${r.description}`, columns, gutter)
      : [chalk.bold(r.name), ...wrapWords(`  ${r.description}`, columns, '  ')];
    ctx.stdout.write(`${lines.join('\n')}\n`);
  }
  const hint = wrapWords(`${chalk.dim('dynamo-dev recipes show NAME  prints one; dynamo-dev up NAME starts it')}`, columns);
  ctx.stdout.write(`\n${hint.join('\n')}\n`);
  return 0;
}
