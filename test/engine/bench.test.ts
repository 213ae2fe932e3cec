import { delimiter } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { cleanup, cli, cpuArgs, engineHome, json, ourEngines, portBlock, records } from './helpers.js';

// `bench --preset routing --device cpu` on the real engine with real AIPerf, kept short for CI: the
// two variants that show what KV routing buys (--variants kv-events,round-robin: two starts of two
// real CPU workers instead of five), one load run of 24 requests at concurrency 1 over the
// preset's shared prefixes of 1,024 tokens (4 at 24 requests: ~6 sends each, bench/presets.ts loadFor) (longer than the CPU engine's 128-token KV block, so
// a repeat can hit). KV routing sends a repeat to the worker holding its prefix; round-robin
// alternates, so about half of its repeats land on the other worker and miss.

afterEach(cleanup);

interface Gate { id: string; status: string; summary: string; evidence: Record<string, any> }
interface Variant { name: string; status: string; reason: string | null; gates: Gate[]; runs: { metrics: { cacheHitShare: number | null; requests: number; errors: number }; samples?: { cachedTokens: number[] | null } }[] }
interface BenchDoc { preset: string; machine: { engine: string; vllm: string | null }; variants: Variant[] }

describe('bench --preset routing on vLLM\'s CPU build', () => {
  it('kv-events against round-robin: every gate passes on real evidence, KV routing\'s cache-hit share above round-robin\'s', async () => {
    const home = engineHome();
    home.env.PATH = [inject('engineAiperfBin'), home.env.PATH].join(delimiter);
    const t0 = Date.now();
    // --no-preflight: on a shared machine other runs' engine processes fail procs.leftover (the
    // agg-router test runs up's preflight on this engine); the ports are still checked.
    const r = await cli([
      'bench', '--preset', 'routing', '--variants', 'kv-events,round-robin', ...cpuArgs(await portBlock()), '--set', 'maxModelLen=2048',
      '--concurrency', '1', '--repeats', '1', '--requests', '24', '--seed', '3', '--no-preflight', '--json',
    ], home, 1_500_000);
    console.error(`test:engine: bench --preset routing (kv-events, round-robin) on the CPU in ${Math.round((Date.now() - t0) / 1000)} s`);
    const doc = json<BenchDoc>(r);
    expect(r.code, r.stderr).toBe(0);
    expect(doc.preset).toBe('routing');
    expect(doc.machine).toMatchObject({ engine: 'vllm', vllm: '0.31.0' });
    expect(doc.variants.map((v) => [v.name, v.status, v.reason])).toEqual([['kv-events', 'measured', null], ['round-robin', 'measured', null]]);

    for (const v of doc.variants) {
      // Every gate passed, none unknown.
      expect(v.gates.map((g) => [g.id, g.status]), `${v.name}: ${JSON.stringify(v.gates.map((g) => g.summary))}`).toEqual(v.gates.map((g) => [g.id, 'pass']));
      expect(v.gates.map((g) => g.id).sort()).toEqual(['kv.events', 'model.same', 'processes.alive', 'hf.no-lock-wait', 'workers.ready'].sort());
      const m = v.runs[0].metrics;
      expect([m.requests, m.errors]).toEqual([24, 0]);
      expect(v.runs[0].samples?.cachedTokens, `${v.name}: cached_tokens per request`).toHaveLength(24);
    }
    const [kv, rr] = doc.variants;
    // The KV router's events were seen: counted by the router after the load (real evidence, not the absence of a warning).
    const applied = kv.gates.find((g) => g.id === 'kv.events')!.evidence.eventsApplied as { ok: number; byWorker: Record<string, number> };
    expect(applied.ok).toBeGreaterThan(0);
    // (2026-12-07: all 10 applied events were counted under one worker id, though both served requests: not asserted.)
    console.error(`test:engine: KV events applied by worker: ${JSON.stringify(applied.byWorker)}`);
    const share = (v: Variant) => v.runs[0].metrics.cacheHitShare!;
    console.error(`test:engine: cache-hit share kv-events ${(share(kv) * 100).toFixed(1)}%, round-robin ${(share(rr) * 100).toFixed(1)}%`);
    expect(share(kv)).toBeGreaterThan(share(rr));
    // Every variant's run was torn down: nothing of it is left.
    expect(records(home.stateDir).every((rec) => rec.state === 'stopped')).toBe(true);
    expect(ourEngines(home)).toEqual([]);
  }, 1_800_000);
});
