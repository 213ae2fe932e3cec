import chalk from 'chalk';
import type { Plan } from '../plan/types.js';

// `up --dry-run` for humans: what would run, with which flags, env, ports and memory.

const shq = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export function formatPlanText(plan: Plan): string {
  const out: string[] = [];
  const gpu = plan.gpu.totalMiB !== null ? `GPU ${plan.gpu.index} (${plan.gpu.totalMiB.toLocaleString('en-US')} MiB)` : `GPU ${plan.gpu.index} (total unknown: no nvidia-smi answer)`;
  const dyn = !plan.dynamo ? null
    : plan.dynamo.assumed
      ? `Dynamo ${plan.dynamo.version ? `${plan.dynamo.version} (unreadable version)` : 'version unknown'}: planned for ${plan.dynamo.plannedFor}`
      : `Dynamo ${plan.dynamo.version}`;
  out.push(`${chalk.bold(`plan: ${plan.recipe}`)}  ${plan.model}  ${gpu}${dyn ? `  ${dyn}` : ''}`);
  const budget = plan.engine === 'mocker'
    ? 'mocker engine: no GPU memory'
    : `fractions sum to ${plan.budget.fractionSum} of limit ${plan.budget.limit}${plan.budget.budgetMiB !== null ? ` = ${plan.budget.budgetMiB.toLocaleString('en-US')} MiB` : ''}`;
  out.push(`router: ${plan.router.mode}${plan.router.mode === 'kv' ? (plan.router.kvEvents ? ' with KV events' : ' approximate (no KV events)') : ''}` +
    `  ·  ${plan.disaggregated ? 'disaggregated' : 'aggregated'}  ·  ${budget}  ·  max model len ${plan.maxModelLen}`);
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
    if (env.length) out.push(`  env  ${env.join(' ')}`);
    out.push(`  run  ${p.argv.map(shq).join(' ')}`);
    const ready = [
      p.ready.logPattern ? `log /${p.ready.logPattern}/` : null,
      p.ready.http ? `GET ${p.ready.http}` : null,
      p.ready.modelReady ? `GET ${p.ready.modelReady}` : null,
      p.ready.workers ? `${p.ready.workers} worker${p.ready.workers === 1 ? '' : 's'} counted` : null,
      p.ready.completion ? 'one completion answered' : null,
      p.ready.viaFrontend ? 'the frontend counts it' : null,
    ].filter(Boolean);
    out.push(`  ready when  ${ready.join(' then ')}`);
  }
  return `${out.join('\n')}\n`;
}
