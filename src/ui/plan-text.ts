import chalk from 'chalk';
import type { Plan } from '../plan/types.js';
import { visibleLength, wrapWords } from './fit.js';

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

export function formatPlanText(plan: Plan, columns = Infinity): string {
  const out: string[] = [];
  const gpu = plan.gpu.totalMiB !== null ? `GPU ${plan.gpu.index} (${plan.gpu.totalMiB.toLocaleString('en-US')} MiB)` : `GPU ${plan.gpu.index} (total unknown: no nvidia-smi answer)`;
  const dyn = !plan.dynamo ? null
    : plan.dynamo.assumed
      ? `Dynamo ${plan.dynamo.version ? `${plan.dynamo.version} (unreadable version)` : 'version unknown'}: planned for ${plan.dynamo.plannedFor}`
      : `Dynamo ${plan.dynamo.version}`;
  out.push(...wrapWords(`${chalk.bold(`plan: ${plan.recipe}`)}  ${plan.model}  ${gpu}${dyn ? `  ${dyn}` : ''}`, columns, '  '));
  const budget = plan.engine === 'mocker'
    ? 'mocker engine: no GPU memory'
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
    p.waitFor.length ? `after ${p.waitFor.join(', ')} KV line` : 'at once',
  ]);
  const head = ['process', 'role', 'ports', 'gpu', 'KV tokens', 'starts'];
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  out.push(chalk.dim(head.map((h, i) => h.padEnd(w[i])).join('  ')));
  for (const r of rows) out.push(r.map((c, i) => c.padEnd(w[i])).join('  ').trimEnd());
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
