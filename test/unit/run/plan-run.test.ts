import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { FIXTURES, tempHomes } from '../../helpers/cli.js';
import { parseRecipe } from '../../../src/recipe/load.js';
import { hiddenKvLineWarning, planRun } from '../../../src/run/plan-run.js';
import { runDir } from '../../../src/run/paths.js';
import { markerFor, RUN_MARKER } from '../../../src/run/run-scan.js';

// planRun (src/run/plan-run.ts), the plan `up` and each bench variant make before anything starts:
// the run id, the environment the interpreter's probes run with (the run's marker, so a helper a
// probe leaves behind is the run's), and the plan with the installed Dynamo's version. Here with the
// test fixtures' fake Dynamo on PYTHONPATH (its version: FAKE_DYNAMO_VERSION, default 1.6.1).

const home = tempHomes('dd-plan-run-');
const python = { interpreter: 'python3', source: 'given' as const, managed: null };
const env = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH, HOME: process.env.HOME, PYTHONPATH: join(FIXTURES, 'python'), ...extra });
const mocker = parseRecipe('name: mine\nengine: mocker\nworkers:\n  - role: agg\n', 'mine.yaml');

describe('planRun', () => {
  it('a run id from the recipe (and --name), probes with the run\'s marker, the plan in that run\'s folder, the Dynamo version told as soon as read', async () => {
    const { stateDir } = home();
    const told: (string | null)[] = [];
    const r = await planRun({ recipe: mocker, source: 'mine.yaml', python, env: env({ FAKE_DYNAMO_VERSION: '1.4.2' }), stateDir, name: 'b', onDynamoVersion: (v) => void told.push(v) });
    expect(r.runId).toMatch(/^\d{8}-\d{6}-\d{3}-mine-b$/);
    expect(r.probeEnv[RUN_MARKER]).toBe(markerFor(stateDir, r.runId));
    expect(r.probeEnv.PYTHONPATH).toBe(join(FIXTURES, 'python'));
    expect(r.plan.runDir).toBe(runDir(stateDir, r.runId));
    expect(r.plan.dynamo).toMatchObject({ version: '1.4.2', assumed: false });
    expect(told).toEqual(['1.4.2']);
    // Another folder (a suffixed id, ports beside a live run): the same plan there.
    const again = r.planAt('/elsewhere/run');
    expect(again.runDir).toBe('/elsewhere/run');
    expect(again.processes.map((p) => p.name)).toEqual(r.plan.processes.map((p) => p.name));
  });

  it('--dry-run: nothing will run, so the probes carry no marker; no --name: the recipe\'s name alone; no Dynamo: version null', async () => {
    const { stateDir } = home();
    const told: (string | null)[] = [];
    const r = await planRun({ recipe: mocker, source: 'mine.yaml', python, env: env({ FAKE_MISSING_MODULES: 'dynamo' }), stateDir, dryRun: true, onDynamoVersion: (v) => void told.push(v) });
    expect(r.runId).toMatch(/^\d{8}-\d{6}-\d{3}-mine$/);
    expect(r.probeEnv).not.toHaveProperty(RUN_MARKER);
    expect(told).toEqual([null]);
    expect(r.plan.dynamo).toMatchObject({ version: null, assumed: true });
  });
});

describe('hiddenKvLineWarning', () => {
  const vllm = parseRecipe('name: v\nworkers:\n  - role: agg\n    replicas: 2\n    gpuMemoryUtilization: 0.3\n', 'v.yaml');
  const plan = async (r = vllm) => (await planRun({ recipe: r, source: 'v.yaml', python, env: env(), stateDir: home().stateDir, dryRun: true })).plan;

  it('null when nothing hides INFO (unset, INFO, DEBUG)', async () => {
    const p = await plan();
    expect(hiddenKvLineWarning({}, p)).toBeNull();
    expect(hiddenKvLineWarning({ VLLM_LOGGING_LEVEL: 'INFO' }, p)).toBeNull();
    expect(hiddenKvLineWarning({ VLLM_LOGGING_LEVEL: 'debug' }, p)).toBeNull();
  });

  it('WARNING in the user\'s environment: names every worker that must log the line, and the fix', async () => {
    expect(hiddenKvLineWarning({ VLLM_LOGGING_LEVEL: 'WARNING' }, await plan())).toBe(
      'warning: VLLM_LOGGING_LEVEL=WARNING hides vLLM\'s INFO line "GPU KV cache size: N tokens" that agg-0, agg-1 must log to be ready (and to let the next worker start): up will wait until --ready-timeout; unset VLLM_LOGGING_LEVEL or set it to INFO',
    );
  });

  it('a worker\'s own env decides for it: ERROR there, INFO outside names that worker only', async () => {
    const r = parseRecipe('name: v\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.3\n  - role: agg\n    gpuMemoryUtilization: 0.3\n    env: {VLLM_LOGGING_LEVEL: ERROR}\n', 'v.yaml');
    expect(hiddenKvLineWarning({ VLLM_LOGGING_LEVEL: 'INFO' }, await plan(r))).toMatch(/^warning: VLLM_LOGGING_LEVEL=ERROR hides .* that agg-1 must log/);
  });
});
