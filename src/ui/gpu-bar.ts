import chalk from 'chalk';
import type { Plan } from '../plan/types.js';
import { MIB } from '../plan/kv-math.js';
import { wrapWords } from './fit.js';

// A picture of the GPU (pure): one bar per GPU, each worker's fraction of the total split into
// weights, KV cache and overhead, and what is left. Before start the KV part is the plan's
// estimate; once a worker logged its KV size, the measured tokens x bytes per token.
// vLLM takes --gpu-memory-utilization as a fraction of TOTAL memory (FACTS §3), so a worker's
// share is fraction x total, whatever else runs.

export interface GpuSlice {
  name: string;
  fraction: number;
  /** fraction x total, MiB (rounded). */
  mib: number;
  weightsMiB: number | null;
  kvMiB: number | null;
  kvTokens: number | null;
  overheadMiB: number | null;
  /** KV from the worker's own log line (true) or the plan's estimate. */
  measured: boolean;
}

export interface GpuPicture {
  index: number;
  totalMiB: number;
  slices: GpuSlice[];
  /** total - the workers' shares (what a new process could still get). */
  freeMiB: number;
  limit: number;
}

/** Null without the GPU's total (no nvidia-smi) or for the mocker. `kvTokens` by process: measured values. */
export function gpuPicture(plan: Plan, kvTokens: Record<string, number | null> = {}): GpuPicture | null {
  // A plan read from a run.json is only loosely checked (an older or hand-edited record may lack
  // parts): without what the picture needs there is no picture, rather than a crashed status.
  const total = plan.gpu?.totalMiB;
  if (typeof total !== 'number' || plan.engine === 'mocker' || !Array.isArray(plan.processes) || !plan.budget) return null;
  const mem = plan.memory ?? { bytesPerToken: null, weightsMiB: null, overheadMiB: null };
  const workers = plan.processes.filter((p) => p.gpuMemoryUtilization !== null);
  // Whole MiB per worker that add up exactly to round(total x sum): no MiB lost or invented by rounding.
  let acc = 0;
  let given = 0;
  const slices = workers.map((p) => {
    acc += total * p.gpuMemoryUtilization!;
    const mib = Math.round(acc) - given;
    given += mib;
    const weights = mem.weightsMiB !== null ? Math.round(mem.weightsMiB) : null;
    const measuredTokens = kvTokens[p.name] ?? null;
    const tokens = measuredTokens ?? p.kvTokensEstimate;
    const kv = tokens !== null && mem.bytesPerToken !== null ? Math.round((tokens * mem.bytesPerToken) / MIB) : null;
    // Overhead is what the share holds besides weights and KV: measured KV makes it measured too.
    const overhead = weights !== null && kv !== null ? Math.max(0, mib - weights - kv) : mem.overheadMiB;
    return { name: p.name, fraction: p.gpuMemoryUtilization!, mib, weightsMiB: weights, kvMiB: kv, kvTokens: tokens, overheadMiB: overhead, measured: measuredTokens !== null };
  });
  return { index: plan.gpu.index, totalMiB: total, slices, freeMiB: total - given, limit: plan.budget.limit };
}

interface Cells { slice: number; weights: number; kv: number; overhead: number; unknown: number }

const n = (x: number) => x.toLocaleString('en-US');

/** Column counts of each part of the bar; they add up to `width` exactly. */
export function barCells(pic: GpuPicture, width: number): Cells[] & { free?: number } {
  const cells: Cells[] = [];
  let accMiB = 0;
  let usedCells = 0;
  for (const s of pic.slices) {
    accMiB += s.mib;
    const end = Math.round((accMiB / pic.totalMiB) * width);
    const cellsOf = end - usedCells;
    usedCells = end;
    if (s.weightsMiB === null || s.kvMiB === null) {
      cells.push({ slice: cellsOf, weights: 0, kv: 0, overhead: 0, unknown: cellsOf });
      continue;
    }
    const w = s.weightsMiB !== null && s.mib > 0 ? Math.min(cellsOf, Math.round((s.weightsMiB / s.mib) * cellsOf)) : 0;
    const k = s.kvMiB !== null && s.mib > 0 ? Math.min(cellsOf - w, Math.round((s.kvMiB / s.mib) * cellsOf)) : 0;
    cells.push({ slice: cellsOf, weights: w, kv: k, overhead: cellsOf - w - k, unknown: 0 });
  }
  const out = cells as ReturnType<typeof barCells>;
  out.free = width - usedCells;
  return out;
}

const PAINT = [chalk.cyan, chalk.magenta, chalk.blue, chalk.green, chalk.yellow];

/**
 * The bar and a legend line per worker. `fancy` (a terminal): block characters, a colour per
 * worker; otherwise plain ASCII that survives any pipe or log (W weights, K KV, o overhead, . free).
 */
export function formatGpuPicture(pic: GpuPicture, o: { width: number; fancy: boolean; indent?: string }): string {
  const ind = o.indent ?? '';
  const head = `GPU ${pic.index} ${n(pic.totalMiB)} MiB `;
  const barWidth = Math.max(10, Math.min(60, o.width - ind.length - head.length - 2));
  const cells = barCells(pic, barWidth);
  const glyph = o.fancy ? { w: '█', k: '▓', o: '░', u: '▒', f: '·' } : { w: 'W', k: 'K', o: 'o', u: '#', f: '.' };
  const parts = cells.map((c, i) => {
    const paint = o.fancy ? PAINT[i % PAINT.length] : (s: string) => s;
    return paint(glyph.w.repeat(c.weights) + glyph.k.repeat(c.kv) + glyph.o.repeat(c.overhead) + glyph.u.repeat(c.unknown));
  });
  const lines = [`${ind}${head}[${parts.join('')}${chalk.dim(glyph.f.repeat(cells.free ?? 0))}]`];
  const w = Math.max(4, ...pic.slices.map((s) => s.name.length));
  pic.slices.forEach((s, i) => {
    const paint = o.fancy ? PAINT[i % PAINT.length] : (x: string) => x;
    const split = s.weightsMiB === null && s.kvMiB === null
      ? `split unknown (model not in the HF cache)${s.kvTokens !== null ? `; KV ${n(s.kvTokens)} tokens` : ''}`
      : [
      s.weightsMiB !== null ? `weights ${n(s.weightsMiB)}` : 'weights ?',
      s.kvMiB !== null ? `KV ${s.measured ? '' : '~'}${n(s.kvMiB)}` : `KV ?${s.kvTokens !== null ? ` (${n(s.kvTokens)} tokens)` : ''}`,
      s.overheadMiB !== null ? `other ${s.weightsMiB !== null && s.kvMiB !== null ? '' : '~'}${n(s.overheadMiB)}` : 'other ?',
      ].join(' + ');
    const tokens = s.kvTokens !== null && s.kvMiB !== null && s.weightsMiB !== null ? `  (${s.measured ? '' : '~'}${n(s.kvTokens)} tokens)` : '';
    lines.push(...wrapWords(`${ind}  ${paint(s.name.padEnd(w))}  ${s.fraction} = ${n(s.mib)} MiB: ${split}${tokens}`, o.width, `${ind}${' '.repeat(w + 4)}`));
  });
  lines.push(`${ind}  ${'free'.padEnd(w)}  ${n(pic.freeMiB)} MiB${pic.slices.length ? ` (the workers' shares add up to ${n(pic.totalMiB - pic.freeMiB)} MiB)` : ''}`);
  lines.push(chalk.dim(`${ind}  key: ${glyph.w} weights  ${glyph.k} KV cache  ${glyph.o} other  ${glyph.u} not known  ${glyph.f} free`));
  return `${lines.join('\n')}\n`;
}
