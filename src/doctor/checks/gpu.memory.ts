import type { ComputeApp } from '../../host/types.js';
import { fitFractionSets } from '../../plan/fix-hints.js';
import { type Check, type CheckResult, fail, pass, skip, warn } from '../types.js';
import { ownersOf, type PidOwner } from '../run-share.js';
import { CPU_DEVICE_SKIP } from './gpu.driver.js';

// gpu.memory: vLLM takes `--gpu-memory-utilization` as a fraction of the device's TOTAL memory and
// refuses to start when free memory is below total x F (FACTS §3: "Free memory on device ... is
// less than desired GPU memory utilization"). Workers start one after another on the same GPU,
// so the whole plan needs free >= total x (sum of fractions) before the first one starts.

const ENGINE_PROC = /VLLM::|dynamo\.(vllm|frontend|mocker)/i;

const describeApp = (a: ComputeApp, ours: boolean, of?: PidOwner): string =>
  `pid ${a.pid} ${a.processName || '(unnamed)'}: ${a.usedMiB === null ? '? MiB' : `${a.usedMiB} MiB`}${ours ? ' (this run)' : of ? ` (live ${of.run}${of.process ? `, ${of.process}` : ''})` : ''}`;

const check: Check = {
  id: 'gpu.memory',
  title: 'Free GPU memory for the plan',
  async run(facts): Promise<CheckResult> {
    const { plan } = facts;
    if (plan.device === 'cpu' && plan.engine === 'vllm') return skip(CPU_DEVICE_SKIP, { budgetMiB: 0 });
    if (plan.engine === 'mocker' || plan.budget.fractionSum <= 0) {
      return skip('the mocker engine uses no GPU memory', { budgetMiB: 0 });
    }
    const g = await facts.gpu();
    if (!g.ok) return skip('no GPU facts: see gpu.driver', { reason: g.reason });
    const gpu = g.gpus.find((x) => x.index === plan.gpu.index);
    if (!gpu) return skip(`GPU ${plan.gpu.index} is not listed: see gpu.driver`, {});

    const [appsFacts, lives] = await Promise.all([facts.computeApps(), facts.liveRuns()]);
    // Apps without a uuid (3-column output) cannot be placed: count them on this GPU rather than miss them.
    const apps = appsFacts.ok ? appsFacts.apps.filter((a) => a.gpuUuid === null || gpu.uuid === null || a.gpuUuid === gpu.uuid) : [];
    // The live run whose own plan is judged holds its budget already: doctor must not fail because
    // of the run itself. Another live run's memory (up --name side by side, or a recipe checked to
    // start beside a run) is not free for this plan: counted as used, and named as that run's.
    const run = lives.find((v) => v.record.id === facts.planRunId);
    const ourPids = new Set(run ? run.pids : []);
    const ours = apps.filter((a) => ourPids.has(a.pid));
    const others = apps.filter((a) => !ourPids.has(a.pid));
    const ourMiB = ours.reduce((s, a) => s + (a.usedMiB ?? 0), 0);
    const otherLive = others.length > 0 && lives.length > 0 ? ownersOf(others.map((a) => a.pid), lives, await facts.processes()) : new Map<number, PidOwner>();
    const appLines = [...others.map((a) => describeApp(a, false, otherLive.get(a.pid))), ...ours.map((a) => describeApp(a, true))];
    if (!appsFacts.ok) appLines.push(`compute apps unknown: ${appsFacts.message}`);
    const evidence: Record<string, unknown> = {
      gpu: gpu.index,
      totalMiB: gpu.memoryTotalMiB,
      freeMiB: gpu.memoryFreeMiB,
      fractionSum: plan.budget.fractionSum,
      apps: apps.map((a) => ({ pid: a.pid, name: a.processName, usedMiB: a.usedMiB, ours: ourPids.has(a.pid) })),
    };

    if (gpu.memoryTotalMiB === null || gpu.memoryFreeMiB === null) {
      // Unified memory (e.g. GB10): nvidia-smi reports [N/A]; a pass here would be a guess.
      return warn(
        `GPU ${gpu.index} (${gpu.name}) reports no memory figures ([N/A], unified memory): the plan's budget of ` +
          `${plan.budget.fractionSum} x total cannot be checked`,
        'check free system memory with `free -m` before starting; on unified memory the fractions apply to memory shared with the CPU',
        appLines,
        evidence,
      );
    }
    const total = gpu.memoryTotalMiB;
    const budget = plan.budget.budgetMiB ?? Math.ceil(total * plan.budget.fractionSum);
    const available = gpu.memoryFreeMiB + ourMiB;
    evidence.budgetMiB = budget;
    evidence.availableMiB = available;
    const ourNote = ourMiB > 0 ? ` (+${ourMiB} MiB held by the live run)` : '';
    const need = `the plan needs ${budget} MiB (fractions ${plan.budget.fractionSum} x ${total} MiB)`;
    if (available >= budget) {
      return pass(`${gpu.memoryFreeMiB} MiB free of ${total} MiB on GPU ${gpu.index}${ourNote}; ${need}`, evidence, appLines);
    }
    const fits = Math.floor((available / total) * 100) / 100;
    const strangers = others.filter((a) => !otherLive.has(a.pid));
    const engines = strangers.filter((a) => ENGINE_PROC.test(a.processName));
    const liveRefs = [...new Set(others.flatMap((a) => { const o = otherLive.get(a.pid); return o ? [o.ref] : []; }))];
    const fixes: string[] = [];
    if (liveRefs.length > 0) fixes.push(`stop a live run holding it: ${liveRefs.map((r) => `\`dynamo-dev teardown --run ${r}\``).join(', ')}`);
    if (engines.length > 0) fixes.push(`${fixes.length > 0 ? 'or ' : ''}stop leftover engine processes: \`dynamo-dev teardown --orphans\``);
    else if (strangers.length > 0) fixes.push(`${fixes.length > 0 ? 'or ' : ''}stop the processes above (pids ${strangers.map((a) => a.pid).join(', ')})`);
    // "or" only when it follows a first way out: a fix line must read as a sentence. The --set
    // lines fit this recipe (explicit fractions or "auto"); `up --dry-run` shows the KV they leave.
    const sets = fitFractionSets(facts.recipe, fits);
    const lower = sets.length > 0
      ? `lower the workers' gpuMemoryUtilization so they add up to <= ${fits}: \`${sets.join(' ')}\` (with \`--dry-run\` added, \`dynamo-dev up\` of this recipe shows the KV each worker keeps)`
      : null;
    fixes.push(lower ? (fixes.length > 0 ? `or ${lower}` : lower) : 'the GPU has too little free memory left for these workers: free some first');
    return fail(
      `only ${gpu.memoryFreeMiB} MiB free of ${total} MiB on GPU ${gpu.index}${ourNote}; ${need}`,
      fixes.join('; '),
      appLines.length > 0 ? appLines : ['no compute app is listed: the memory may be held by graphics or another container'],
      evidence,
    );
  },
};

export default check;
