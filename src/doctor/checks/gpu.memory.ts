import type { ComputeApp } from '../../host/types.js';
import { fitFractionSets } from '../../plan/fix-hints.js';
import { type Check, type CheckResult, fail, pass, skip, warn } from '../types.js';

// gpu.memory: vLLM takes `--gpu-memory-utilization` as a fraction of the device's TOTAL memory and
// refuses to start when free memory is below total x F (FACTS §3: "Free memory on device ... is
// less than desired GPU memory utilization"). Workers start one after another on the same GPU,
// so the whole plan needs free >= total x (sum of fractions) before the first one starts.

const ENGINE_PROC = /VLLM::|dynamo\.(vllm|frontend|mocker)/i;

const describeApp = (a: ComputeApp, ours: boolean): string =>
  `pid ${a.pid} ${a.processName || '(unnamed)'}: ${a.usedMiB === null ? '? MiB' : `${a.usedMiB} MiB`}${ours ? ' (this run)' : ''}`;

const check: Check = {
  id: 'gpu.memory',
  title: 'Free GPU memory for the plan',
  async run(facts): Promise<CheckResult> {
    const { plan } = facts;
    if (plan.engine === 'mocker' || plan.budget.fractionSum <= 0) {
      return skip('the mocker engine uses no GPU memory', { budgetMiB: 0 });
    }
    const g = await facts.gpu();
    if (!g.ok) return skip('no GPU facts: see gpu.driver', { reason: g.reason });
    const gpu = g.gpus.find((x) => x.index === plan.gpu.index);
    if (!gpu) return skip(`GPU ${plan.gpu.index} is not listed: see gpu.driver`, {});

    const [appsFacts, run] = await Promise.all([facts.computeApps(), facts.liveRun()]);
    // Apps without a uuid (3-column output) cannot be placed: count them on this GPU rather than miss them.
    const apps = appsFacts.ok ? appsFacts.apps.filter((a) => a.gpuUuid === null || gpu.uuid === null || a.gpuUuid === gpu.uuid) : [];
    // During a live run, that run's memory is ours: doctor must not fail because of the run itself.
    const ourPids = new Set(run?.live ? run.pids : []);
    const ours = apps.filter((a) => ourPids.has(a.pid));
    const others = apps.filter((a) => !ourPids.has(a.pid));
    const ourMiB = ours.reduce((s, a) => s + (a.usedMiB ?? 0), 0);
    const appLines = [...others.map((a) => describeApp(a, false)), ...ours.map((a) => describeApp(a, true))];
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
    const engines = others.filter((a) => ENGINE_PROC.test(a.processName));
    const fixes: string[] = [];
    if (engines.length > 0) fixes.push('stop leftover engine processes: `dynamo-dev teardown --orphans`');
    else if (others.length > 0) fixes.push(`stop the processes above (pids ${others.map((a) => a.pid).join(', ')})`);
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
