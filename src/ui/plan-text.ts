import chalk from 'chalk';
import type { Plan } from '../plan/types.js';
import { versionSupport } from '../plan/dynamo-releases.js';
import { keepWhole, visibleLength, wrapFix, wrapWords } from './fit.js';

// `up --dry-run` for humans: what would run, with which flags, env, ports and memory.

const shq = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/**
 * `  label  value` where value is something to paste (a command, env assignments): on a terminal
 * too narrow for both, the label alone and the value whole on the next line at column 0, so the
 * terminal soft-wraps it there and a line selection copies exactly it (never cut mid-word).
 */
function pasteLine(label: string, value: string, columns: number): string[] {
  const line = `  ${label}  ${value}`;
  return visibleLength(line) <= columns ? [line] : [`  ${label}`, value];
}

/** Columns whose cells wrap at spaces (never inside a word) when the table is wider than the terminal. */
const WRAP = ['ports', 'starts'];
/** Then, on a terminal too narrow even so, whole columns go, least needed first (`--dry-run --json` has them all; the fraction is in each `run` line too). */
const DROP = ['KV tokens', 'role', 'gpu'];

/**
 * The process table within `columns`: the ports and starts cells wrap onto more lines of their
 * row (never narrower than their longest word), choosing the widths that fit with the fewest
 * lines; if none fits, columns go (DROP). Unlimited (piped): one line per process, as wide as it takes.
 */
export function processTable(head: string[], rows: string[][], columns = Infinity): string[] {
  const sep = 2;
  // wrapFix: words a cell keeps together (keepWhole: "KV line") stay on one line.
  const linesOf = (cell: string, width: number) => (cell === '' ? [''] : wrapFix(cell, width));
  const widest = (i: number, width: number) => Math.max(head[i].length, ...rows.flatMap((r) => linesOf(r[i], width).map(visibleLength)));
  /** The widths a column can take: one line per cell, then each narrower wrap down to its longest word. */
  const choices = (i: number): number[] => {
    const out = [widest(i, Infinity)];
    if (!WRAP.includes(head[i])) return out;
    const floor = Math.max(head[i].length, ...rows.flatMap((r) => r[i].split(' ').map((w) => w.length)));
    while (out.at(-1)! > floor) out.push(widest(i, out.at(-1)! - 1));
    return out;
  };
  const height = (keep: number[], widths: number[]) => rows.reduce((n, r) => n + Math.max(...keep.map((i, k) => linesOf(r[i], widths[k]).length)), 0);
  let keep = head.map((_, i) => i);
  let widths: number[] = [];
  for (const drop of [null, ...DROP]) {
    if (drop !== null) keep = keep.filter((i) => head[i] !== drop);
    // Every combination of the columns' widths (a handful each): the one that fits in the fewest lines, then the widest.
    const combos = keep.reduce<number[][]>((acc, i) => acc.flatMap((c) => choices(i).map((w) => [...c, w])), [[]]);
    const total = (ws: number[]) => ws.reduce((a, b) => a + b, 0) + sep * (ws.length - 1);
    const fitting = combos.filter((ws) => total(ws) <= columns).map((ws) => ({ ws, lines: height(keep, ws) }));
    fitting.sort((a, b) => a.lines - b.lines || total(b.ws) - total(a.ws));
    widths = fitting[0]?.ws ?? combos.at(-1)!;
    if (fitting.length > 0) break;
  }
  const out = [chalk.dim(keep.map((i, k) => head[i].padEnd(widths[k])).join(' '.repeat(sep)))];
  for (const r of rows) {
    const cells = keep.map((i, k) => linesOf(r[i], widths[k]));
    const n = Math.max(...cells.map((c) => c.length));
    for (let line = 0; line < n; line++) out.push(cells.map((c, k) => (c[line] ?? '').padEnd(widths[k])).join(' '.repeat(sep)).trimEnd());
  }
  return out;
}

export function formatPlanText(plan: Plan, columns = Infinity): string {
  const out: string[] = [];
  const cpu = plan.device === 'cpu';
  const gpu = cpu
    ? `CPU (vLLM's CPU build${plan.host ? `; ${(plan.host.memTotalMiB / 1024).toFixed(1)} GiB RAM, ${plan.host.cpus} cores` : ''})`
    : plan.gpu.totalMiB !== null ? `GPU ${plan.gpu.index} (${plan.gpu.totalMiB.toLocaleString('en-US')} MiB)` : `GPU ${plan.gpu.index} (total unknown: no nvidia-smi answer)`;
  const dyn = !plan.dynamo ? null
    : plan.dynamo.assumed
      ? `Dynamo ${plan.dynamo.version ? `${plan.dynamo.version} (unreadable version)` : 'version unknown'}: planned for ${plan.dynamo.plannedFor}`
      : versionSupport(plan.dynamo.version ?? '') === 'from-source'
      ? `Dynamo ${plan.dynamo.version} (from source, not run here: flags read from its source and release notes)`
      : `Dynamo ${plan.dynamo.version}`;
  out.push(...wrapWords(`${chalk.bold(`plan: ${plan.recipe}`)}  ${plan.model}  ${gpu}${dyn ? `  ${dyn}` : ''}`, columns, '  '));
  const kvGiB = plan.processes.map((p) => p.kvCacheGiB).filter((k): k is number => k !== undefined);
  const budget = plan.engine === 'mocker'
    ? 'mocker engine: no GPU memory'
    : cpu
    ? `fractions of host RAM sum to ${plan.budget.fractionSum}${kvGiB.length ? `: KV ${[...new Set(kvGiB)].join('/')} GiB per worker` : ''}${plan.budget.budgetMiB !== null ? `, ~${plan.budget.budgetMiB.toLocaleString('en-US')} MiB with the workers' own` : ''}`
    : `fractions sum to ${plan.budget.fractionSum} of limit ${plan.budget.limit}${plan.budget.budgetMiB !== null ? ` = ${plan.budget.budgetMiB.toLocaleString('en-US')} MiB` : ''}`;
  out.push(...wrapWords(`router: ${plan.router.mode}${plan.router.mode === 'kv' ? (plan.router.kvEvents ? ' with KV events' : ' approximate (no KV events)') : ''}` +
    `  ·  ${plan.disaggregated ? 'disaggregated' : 'aggregated'}  ·  ${budget}  ·  max model len ${plan.maxModelLen}`, columns, '  '));
  out.push('');
  const rows = plan.processes.map((p) => [
    p.name,
    p.role,
    Object.entries(p.ports).map(([k, v]) => `${k}=${v}`).join(' '),
    p.gpuMemoryUtilization !== null ? String(p.gpuMemoryUtilization) : '-',
    p.kvTokensEstimate !== null ? `~${p.kvTokensEstimate.toLocaleString('en-US')}` : '-',
    p.waitFor.length ? `after ${p.waitFor.join(', ')} ${keepWhole('KV line')}` : 'at once',
  ]);
  out.push(...processTable(['process', 'role', 'ports', 'gpu', 'KV tokens', 'starts'], rows, columns));
  for (const p of plan.processes) {
    out.push('');
    out.push(chalk.bold(p.name));
    const env = Object.entries(p.env).map(([k, v]) => `${k}=${shq(v)}`);
    if (env.length) out.push(...pasteLine('env', env.join(' '), columns));
    out.push(...pasteLine('run', p.argv.map(shq).join(' '), columns));
    const ready = [
      p.ready.logPattern ? `log /${p.ready.logPattern}/` : null,
      p.ready.http ? `GET ${p.ready.http}` : null,
      p.ready.modelReady ? `GET ${p.ready.modelReady}` : null,
      p.ready.workers ? `${p.ready.workers} worker${p.ready.workers === 1 ? '' : 's'} counted` : null,
      p.ready.completion ? 'one completion answered' : null,
      p.ready.viaFrontend ? 'the frontend counts it' : null,
    ].filter(Boolean);
    // Its URLs are copied (to curl them): whole, never cut by the terminal.
    out.push(...wrapWords(`  ready when  ${ready.join(' then ')}`, columns, '    '));
  }
  return `${out.join('\n')}\n`;
}
