import { describe, expect, it } from 'vitest';
import { buildPrompts } from '../../../src/probe/prompts.js';
import { mulberry32, shuffle } from '../../../src/probe/random.js';
import { runProbe } from '../../../src/probe/run.js';
import { buildSchedule } from '../../../src/probe/schedule.js';

// `probe --json` reports its seed so a user can rerun exactly the same probe: the same seed must
// give the same prompts and the same order in every version, word for word (a changed word list
// or generator would make an old seed mean other prompts).

describe('a seed means the same probe, word for word', () => {
  it('mulberry32: the published sequence for seed 1', () => {
    const r = mulberry32(1);
    expect([r(), r(), r()]).toEqual([0.6270739405881613, 0.002735721180215478, 0.5274470399599522]);
  });

  it('a shuffle of six items by seed 7', () => {
    expect(shuffle([0, 1, 2, 3, 4, 5], mulberry32(7))).toEqual([4, 1, 2, 3, 5, 0]);
    expect(shuffle([], mulberry32(7))).toEqual([]);
    expect(shuffle(['only'], mulberry32(7))).toEqual(['only']);
  });

  it('the prompts of seed 42: prefixes, a repeat\'s tail and its word counts', () => {
    const p = buildPrompts({ prefixes: 2, prefixTokens: 16, seed: 42 });
    expect(p.tag).toBe('16');
    expect(p.prefixWords).toBe(16);
    expect(p.prefixes).toEqual([
      'Document 1 of probe 16: side system place sense plan result foot music lot program music',
      'Document 2 of probe 16: official building bridge team film head event plan type teacher report',
    ]);
    expect(p.prompt(1, 2)).toBe(
      'Document 2 of probe 16: official building bridge team film head event plan type teacher report\n\n' +
        'Question 3: product morning position effort system relationship study doctor party position month table. Answer in one word.',
    );
    expect(p.tailWords(1, 2)).toBe(18);
  });

  it('the send order of seed 5 for four prefixes over three rounds', () => {
    expect(buildSchedule(4, 3, 5).map((x) => x.prefix)).toEqual([2, 3, 1, 0, 3, 2, 0, 1, 2, 3, 1, 0]);
  });

  it('the first round is never reordered (no prefix was sent before it): seed 0 starts with prefix 1', () => {
    expect(buildSchedule(3, 1, 0).map((x) => x.prefix)).toEqual([1, 0, 2]);
  });

  it('the send order of seed 5 for three prefixes', () => {
    expect(buildSchedule(3, 2, 5)).toEqual([
      { prefix: 2, repeat: 0 }, { prefix: 1, repeat: 0 }, { prefix: 0, repeat: 0 },
      { prefix: 1, repeat: 1 }, { prefix: 2, repeat: 1 }, { prefix: 0, repeat: 1 },
    ]);
  });
});

describe('edge sizes', () => {
  it('one prefix is simply sent --repeats times (nothing to reorder)', () => {
    expect(buildSchedule(1, 3, 9)).toEqual([{ prefix: 0, repeat: 0 }, { prefix: 0, repeat: 1 }, { prefix: 0, repeat: 2 }]);
  });

  it('no prefixes: no sends and no words', () => {
    expect(buildSchedule(0, 3, 9)).toEqual([]);
    const p = buildPrompts({ prefixes: 0, prefixTokens: 100, seed: 1 });
    expect(p.prefixes).toEqual([]);
    expect(p.prefixWords).toBe(0);
  });

  it('a prefix shorter than its header is the header alone; the tag defaults to the seed in base 36', () => {
    const p = buildPrompts({ prefixes: 1, prefixTokens: 2, seed: 35 });
    expect(p.prefixes).toEqual(['Document 1 of probe z:']);
    expect(buildPrompts({ prefixes: 1, prefixTokens: 2, seed: -1 }).tag).toBe((2 ** 32 - 1).toString(36));
  });
});

describe('runProbe: giving up', () => {
  const ok = { ttftMs: 1, totalMs: 2, cachedTokens: 0, promptTokens: 10, workerId: null };
  it('the last sends failing in a row end the schedule as planned: not "gave up"', async () => {
    let n = 0;
    const run = await runProbe({ settings: { prefixes: 2, repeats: 2, prefixTokens: 16, seed: 1 }, send: async () => { if (n++ >= 1) throw new Error('boom'); return ok; } });
    expect(run.sends.map((s) => s.ok)).toEqual([true, false, false, false]);
    expect(run.stopped).toBeNull();
  });

  it('a custom limit: gives up after that many, with the last error', async () => {
    const run = await runProbe({ settings: { prefixes: 2, repeats: 2, prefixTokens: 16, seed: 1 }, giveUpAfter: 1, send: async () => { throw new Error('refused'); } });
    expect(run).toMatchObject({ planned: 4, stopped: { reason: 'failing', failures: 1, error: 'refused' } });
    expect(run.sends).toHaveLength(1);
  });

  it('a failure that is not an Error is recorded as text', async () => {
    let n = 0;
    const run = await runProbe({
      settings: { prefixes: 2, repeats: 1, prefixTokens: 16, seed: 1 },
      send: async () => { n++; if (n === 1) throw 'HTTP 502'; if (n === 2) throw null; return ok; },
    });
    expect(run.sends.map((s) => s.error)).toEqual(['HTTP 502', 'null']);
    expect(run.sends[0]).toMatchObject({ ok: false, ttftMs: null, totalMs: null, cachedTokens: null, promptTokens: null, workerId: null });
  });

  it('cancelled before the first send: nothing sent, interrupted', async () => {
    const ctl = new AbortController();
    ctl.abort();
    let sent = 0;
    const run = await runProbe({ settings: { prefixes: 2, repeats: 1, prefixTokens: 16, seed: 1 }, signal: ctl.signal, send: async () => { sent++; return ok; } });
    expect(run).toEqual({ sends: [], planned: 2, stopped: { reason: 'interrupted' } });
    expect(sent).toBe(0);
  });
});
