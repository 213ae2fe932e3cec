import { describe, expect, it } from 'vitest';
import { EARLY_FACTS, earlyFactsFor, guessProbeTarget, type EarlyFact } from '../../../src/doctor/early-probes.js';
import { ALL_CHECKS } from '../../../src/doctor/registry.js';
import type { RunView } from '../../../src/doctor/types.js';
import { fakeFacts, recipeFrom } from '../../helpers/facts.js';

// doctor starts the recipe-free probes before loading the recipe: the list of what each check
// asks must be the truth, or a probe starts for nothing (or late).

const EARLY: readonly EarlyFact[] = ['python', 'gpu', 'computeApps', 'processes', 'compat', 'ucx'];

describe('EARLY_FACTS', () => {
  it.each(ALL_CHECKS.map((c) => [c.id, c] as const))('%s starts early exactly the recipe-free probes it asks for', async (id, check) => {
    const facts = fakeFacts({ ports: [{ name: 'frontend.http', port: 8000, free: true, holderPid: null, holderCmd: null }] });
    await check.run(facts);
    const asked = EARLY.filter((k) => (facts.calls[k] ?? 0) > 0);
    expect([...(EARLY_FACTS[id] ?? [])].sort()).toEqual(asked.sort());
  });

  it('the union over the selected checks; --only gpu.driver starts no Python probe', () => {
    // ucx_info is asked only for plans that move KV over NIXL: never started early.
    expect([...earlyFactsFor(ALL_CHECKS)].sort()).toEqual(EARLY.filter((k) => k !== 'ucx').sort());
    expect([...earlyFactsFor(ALL_CHECKS.filter((c) => c.id === 'gpu.driver'))]).toEqual(['gpu']);
  });
});

describe('guessProbeTarget', () => {
  const liveRun = (python: string, engine: 'vllm' | 'mocker') =>
    ({ live: true, record: { recipeSpec: recipeFrom({ python, engine }) } }) as unknown as RunView;

  it('the built-in default without a recipe or live run: python3 and vLLM', () => {
    expect(guessProbeTarget({ recipeText: null, run: null })).toEqual({ interpreter: 'python3', engine: 'vllm' });
  });

  it('reads python and engine from the recipe text, plain or quoted, comments aside', () => {
    const text = 'name: mine\nengine: "mocker"   # no GPU\npython: /opt/venv/bin/python3.12\nworkers:\n  - role: agg\n    python: not-this\n';
    expect(guessProbeTarget({ recipeText: text, run: null })).toEqual({ interpreter: '/opt/venv/bin/python3.12', engine: 'mocker' });
    expect(guessProbeTarget({ recipeText: "engine: 'vllm'\n", run: null })).toEqual({ interpreter: 'python3', engine: 'vllm' });
  });

  it('--python (or $DYNAMO_DEV_PYTHON) wins over the recipe, as in the real target', () => {
    expect(guessProbeTarget({ python: '/usr/bin/python3.11', recipeText: 'python: other\n', run: null }).interpreter).toBe('/usr/bin/python3.11');
  });

  it('without --recipe, the live run\'s recipe; a dead run\'s does not count', () => {
    expect(guessProbeTarget({ recipeText: null, run: liveRun('/venv/bin/python', 'mocker') })).toEqual({ interpreter: '/venv/bin/python', engine: 'mocker' });
    const dead = { ...liveRun('/venv/bin/python', 'mocker'), live: false } as RunView;
    expect(guessProbeTarget({ recipeText: null, run: dead })).toEqual({ interpreter: 'python3', engine: 'vllm' });
  });
});
