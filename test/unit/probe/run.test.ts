import { describe, expect, it } from 'vitest';
import { runProbe, type ProbeProgress, type SendOutcome } from '../../../src/probe/run.js';
import { summarize } from '../../../src/probe/stats.js';
import { judge } from '../../../src/probe/verdict.js';
import { progressLine } from '../../../src/ui/probe-progress.js';

/** A tiny simulated router: caches of whole prompts' first 200 characters per worker. */
function simulated(route: (key: string, i: number) => number) {
  const caches = [new Set<string>(), new Set<string>()];
  let i = 0;
  return async (prompt: string): Promise<SendOutcome> => {
    const key = prompt.slice(0, 200);
    const w = route(key, i++);
    const hit = caches[w].has(key);
    caches[w].add(key);
    return { ttftMs: hit ? 5 : 40, totalMs: 50, cachedTokens: hit ? 240 : 0, promptTokens: 280, workerId: String(w) };
  };
}

const settings = { prefixes: 8, repeats: 4, prefixTokens: 256, seed: 11 };

describe('runProbe', () => {
  it('a router that keeps each prefix on one worker is judged as working', async () => {
    const owner = new Map<string, number>();
    const { sends, stopped } = await runProbe({ settings, send: simulated((k) => owner.get(k) ?? (owner.set(k, owner.size % 2), owner.size % 2 === 1 ? 0 : 1)) });
    expect(stopped).toBeNull();
    expect(sends).toHaveLength(32);
    const v = judge(summarize(sends));
    expect(v.code).toBe('works');
  });

  it('round-robin over the shuffled schedule lands at random level', async () => {
    const { sends } = await runProbe({ settings, send: simulated((_k, i) => i % 2) });
    const stats = summarize(sends);
    expect(stats.meanWorkersPerPrefix!).toBeGreaterThan(1.5);
    expect(judge(stats).code).toBe('random-level');
  });

  it('records a failed request and goes on; a fatal error ends the probe', async () => {
    let n = 0;
    const { sends } = await runProbe({
      settings: { ...settings, prefixes: 2, repeats: 2 },
      send: async () => {
        if (n++ === 1) throw new Error('HTTP 500');
        return { ttftMs: 1, totalMs: 2, cachedTokens: 0, promptTokens: 10, workerId: null };
      },
    });
    expect(sends.map((s) => s.ok)).toEqual([true, false, true, true]);
    expect(sends[1].error).toBe('HTTP 500');

    class Gone extends Error {}
    await expect(runProbe({ settings, send: async () => { throw new Gone('refused'); }, isFatal: (e) => e instanceof Gone })).rejects.toThrow('refused');
  });

  it('gives up after 3 failed sends in a row (a hung frontend must not cost 72 timeouts), not after 2', async () => {
    let n = 0;
    const fails = new Set([1, 2, 4, 5, 6]); // 2 in a row, one success, then 3 in a row
    const run = await runProbe({
      settings,
      send: async () => {
        if (fails.has(n++)) throw new Error(`timeout ${n}`);
        return { ttftMs: 1, totalMs: 2, cachedTokens: 0, promptTokens: 10, workerId: null };
      },
    });
    expect(run.sends.map((s) => s.ok)).toEqual([true, false, false, true, false, false, false]);
    expect(run.planned).toBe(32);
    expect(run.stopped).toEqual({ reason: 'failing', failures: 3, error: 'timeout 7' });
  });

  it('a cancel (Ctrl-C) ends the probe at once; the send it cut short is not recorded', async () => {
    const ctl = new AbortController();
    let n = 0;
    const run = await runProbe({
      settings,
      signal: ctl.signal,
      send: (_prompt, signal) => {
        if (n++ < 2) return Promise.resolve({ ttftMs: 1, totalMs: 2, cachedTokens: 0, promptTokens: 10, workerId: null });
        // the third send hangs until cancelled, as a request in flight does
        return new Promise((_resolve, reject) => {
          signal!.addEventListener('abort', () => reject(new Error('aborted')));
          ctl.abort();
        });
      },
    });
    expect(run.stopped).toEqual({ reason: 'interrupted' });
    expect(run.sends).toHaveLength(2);
  });

  it('reports progress after every send, with round numbers', async () => {
    const seen: ProbeProgress[] = [];
    await runProbe({ settings: { ...settings, prefixes: 2, repeats: 3 }, send: simulated(() => 0), onProgress: (p) => seen.push(p) });
    expect(seen.map((p) => `${p.done}/${p.total}@${p.round}`)).toEqual(['1/6@1', '2/6@1', '3/6@2', '4/6@2', '5/6@3', '6/6@3']);
    expect(progressLine(seen[5], 0)).toMatch(/^\[#{24}\] 6\/6 {2}prefix \d send 3: 5\.0 ms, 240 cached$/);
  });
});
