import { join } from 'node:path';
import { readAiperfEnv, type BasePython } from '../host/python/installer.js';
import { buildOf } from '../plan/dynamo-releases.js';
import { shellQuote } from '../plan/script.js';
import { CPU_BUILDS, cpuSteps } from '../plan/setup-cpu.js';
import {
  AIPERF_VERSION, aiperfSteps, dynamoOnly, plannedSteps, pythonRunsAiperf, requirementsInstall, venvStep, type InstallTools, type SetupEngine, type Step,
} from '../plan/setup-install.js';
import { aiperfDir } from './setup-aiperf.js';
import type { AiperfPlan, PlannedCommand, SetupEvent, SetupScope } from './setup-events.js';

// `setup --dry-run`: what setup would run, exactly, and nothing run: the folder, the lock and the
// log stay untouched.

/** The commands that would build `dir` (or built it: `existing`), the placeholder's fallback, AIPerf's. */
export function dryRunPlan(
  s: SetupScope,
  p: { release: string; engine: SetupEngine; cpu: boolean; dir: string; tools: InstallTools; python: BasePython; uv: string | null; existing: { release: string; engine: SetupEngine } | null },
): Extract<SetupEvent, { event: 'plan' }> {
  const { release, engine, dir, tools } = p;
  const steps = p.cpu ? [venvStep(tools), ...cpuSteps(tools, CPU_BUILDS[release])] : plannedSteps(tools, release, engine);
  const placeholder = p.cpu ? null : buildOf(release)?.placeholder ?? null;
  const fallback = placeholder
    ? {
      placeholder,
      when: `if ${placeholder} (a placeholder that downloads from NVIDIA's index) cannot be fetched, step 2 becomes ai-dynamo alone, then its other pinned requirements without it (written to requirements-without-placeholder.txt):`,
      steps: [dynamoOnly(tools, release), requirementsInstall(tools, join(dir, 'requirements-without-placeholder.txt'), 0)].map((st) => ({ id: st.id, argv: st.argv, command: shellLine(st.argv) })),
    }
    : null;
  return {
    event: 'plan', release, engine, dir, installer: tools.installer, python: p.python, uv: p.uv,
    existing: p.existing ? { release: p.existing.release, engine: p.existing.engine } : null,
    steps: steps.map((st): PlannedCommand => ({ id: st.id, label: st.label, argv: st.argv, command: shellLine(st.argv) })),
    fallback, aiperf: aiperfPlan(s, tools, p.python), durationMs: s.since(),
  };
}

/** AIPerf's environment found, not for this Python, or the commands that would make it (issue 31). */
function aiperfPlan(s: SetupScope, tools: InstallTools, python: BasePython): AiperfPlan {
  const dir = aiperfDir(s);
  if (readAiperfEnv(dir)) return { state: 'ready', dir, version: AIPERF_VERSION };
  if (!pythonRunsAiperf(python.version)) return { state: 'python-too-old', python };
  return { state: 'would-install', dir, version: AIPERF_VERSION, commands: aiperfSteps({ ...tools, dir }).map((st) => shellLine(st.argv)) };
}

/** A command line to paste into a shell. */
const shellLine = (argv: Step['argv']): string => argv.map(shellQuote).join(' ');
