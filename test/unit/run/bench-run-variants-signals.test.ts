import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, tempHomes } from '../../helpers/cli.js';
import { parseRecipe } from '../../../src/recipe/load.js';
import { runVariants } from '../../../src/run/bench-start.js';
import type { BenchDoc, BenchEvent, PreparedVariant } from '../../../src/run/bench.js';
import type { AiperfProgram } from '../../../src/host/python/aiperf.js';

// run/bench-start.ts runVariants (issue 30): the variants run one after another under the stop
// signals. A variant that cannot start is FAILED with its own line and the next still runs; the
// first stop signal (process.emit: no real signal is sent) is said once, leaves the variant being
// started and the rest missing; the handlers are gone when the bench returns.

const home = tempHomes('dd-bench-variants-');
const env = () => ({ PATH: process.env.PATH, HOME: process.env.HOME, PYTHONPATH: join(FIXTURES, 'python') });
const aiperf: AiperfProgram = { file: join(FIXTURES, 'aiperf', 'bin', 'aiperf'), prefix: [], found: 'test', version: '0.13.0' };

// A plan that cannot run (its frontend on a port fetch refuses): refused before anything starts.
const variant = (name: string): PreparedVariant => ({
  name, recipe: 'v.yaml', sets: {}, unmeasurable: null, tokenizer: 'gpt2',
  recipeObj: parseRecipe('name: v\nengine: mocker\nworkers:\n  - role: agg\n', 'v.yaml', ['frontend.httpPort=6000']),
});

const doc = (): BenchDoc => ({
  schemaVersion: 1, id: 'b1', startedAt: '2026-12-05T14:00:00.000Z', endedAt: null, argv: ['bench'], preset: null,
  seed: 0, requests: 8, concurrency: [1], repeats: 1, interrupted: false, isolation: 'fresh-prefixes',
  machine: { gpu: null, driver: null, cudaDriver: null, dynamo: '1.6.1', vllm: null, aiperf: '0.13.0', python: 'python3' },
  load: { inputTokens: 32, outputTokens: 16, prefixes: null }, variants: [],
});

const listening = () => ['SIGINT', 'SIGTERM', 'SIGHUP'].map((s) => process.listenerCount(s));

describe('runVariants', () => {
  it('a variant that cannot start: FAILED with the plan\'s own line, the next variant still tried; no handler left behind', async () => {
    const { stateDir } = home();
    const before = listening();
    const events: BenchEvent[] = [];
    let interrupts = 0;
    const out = await runVariants({ doc: doc(), variants: [variant('a'), variant('b')] }, {
      env: env(), stateDir, python: () => 'python3', aiperf, onEvent: (e) => void events.push(e), onInterrupt: () => void interrupts++,
      start: { python: 'python3', sets: [], preflight: false, warn: () => {} },
    });
    expect(out.variants.map((v) => v.status)).toEqual(['failed', 'failed']);
    expect(out.variants[0].reason).toMatch(/^v\.yaml: frontend\.httpPort: port 6000 is one fetch refuses/);
    expect(events.filter((e) => e.event === 'up').map((e) => (e as { code: number }).code)).toEqual([2, 2]);
    expect(events.some((e) => e.event === 'teardown')).toBe(false);
    expect(out.interrupted).toBe(false);
    expect(interrupts).toBe(0);
    expect(existsSync(join(stateDir, 'runs'))).toBe(false);
    expect(listening()).toEqual(before);
  });

  it('Ctrl-C while the first variant starts: said once (a second Ctrl-C too), that variant and the rest MISSING, the bench interrupted', async () => {
    const { stateDir } = home();
    const before = listening();
    const started: string[] = [];
    let interrupts = 0;
    const out = await runVariants({ doc: doc(), variants: [variant('a'), variant('b')] }, {
      env: env(), stateDir, python: () => 'python3', aiperf, onInterrupt: () => void interrupts++,
      onEvent: (e) => {
        if (e.event === 'variant') {
          started.push(e.name);
          process.emit('SIGINT');
          process.emit('SIGTERM');
        }
      },
      start: { python: 'python3', sets: [], preflight: false, warn: () => {} },
    });
    expect(interrupts).toBe(1);
    expect(started).toEqual(['a']);
    expect(out.interrupted).toBe(true);
    expect(out.variants[0]).toMatchObject({ status: 'missing', reason: 'interrupted while starting; nothing was measured' });
    expect(out.variants[1]).toMatchObject({ status: 'missing', reason: 'not run: the bench was interrupted before it' });
    expect(listening()).toEqual(before);
  });
});
