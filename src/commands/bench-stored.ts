import type { CommandContext } from './context.js';
import { EXIT } from './context.js';
import type { Rendered, Terminal } from '../ui/bench-render.js';
import type { BenchResult } from '../bench/result.js';

// What `bench show` and `bench compare` share: print the stored result(s) as text or the whole
// document(s) as JSON, and draw --plot. The render reads nothing but the documents.

export interface StoredOptions {
  plot?: string;
  json?: boolean;
}

export async function terminalOf(ctx: CommandContext): Promise<Terminal> {
  const { utf8Terminal } = await import('../ui/bench-plot-text.js');
  return { width: ctx.interactive ? ctx.stdout.columns ?? 80 : null, utf8: utf8Terminal(ctx.env) };
}

export async function printStored(ctx: CommandContext, json: unknown, rendered: Rendered, opts: StoredOptions): Promise<number> {
  if (opts.plot) {
    const { writePlotFile } = await import('../host/files/plot-file.js');
    await writePlotFile(opts.plot, rendered.svg());
  }
  if (ctx.json) ctx.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  else ctx.stdout.write(rendered.text);
  if (opts.plot) ctx.stderr.write(`plot: ${opts.plot}\n`);
  return EXIT.ok;
}

/** A --plot path checked before anything is read: a bad extension is exit 2 with nothing done. */
export async function checkPlot(opts: StoredOptions): Promise<void> {
  if (!opts.plot) return;
  const { plotFormat } = await import('../host/files/plot-file.js');
  plotFormat(opts.plot);
}

export { refuseUnplottable } from '../bench/plot-limit.js';
export type { BenchResult };
