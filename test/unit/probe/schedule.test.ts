import { describe, expect, it } from 'vitest';
import { buildPrompts } from '../../../src/probe/prompts.js';
import { buildSchedule } from '../../../src/probe/schedule.js';

describe('buildSchedule', () => {
  it('sends each prefix exactly --repeats times, all first sends before any repeat, round by round', () => {
    const s = buildSchedule(12, 6, 42);
    expect(s).toHaveLength(72);
    for (let p = 0; p < 12; p++) expect(s.filter((x) => x.prefix === p).map((x) => x.repeat)).toEqual([0, 1, 2, 3, 4, 5]);
    for (let r = 0; r < 6; r++) expect(new Set(s.slice(r * 12, r * 12 + 12).map((x) => x.prefix)).size).toBe(12);
    expect(s.slice(0, 12).every((x) => x.repeat === 0)).toBe(true);
  });

  it('never sends one prefix twice in a row', () => {
    for (let seed = 0; seed < 200; seed++) {
      const s = buildSchedule(3, 6, seed);
      for (let i = 1; i < s.length; i++) expect(s[i].prefix, `seed ${seed} at ${i}`).not.toBe(s[i - 1].prefix);
    }
  });

  it('does not let round-robin over two workers pin each prefix to one worker (the fixed-order trap)', () => {
    // Round-robin gives send i to worker i % 2; with 12 prefixes in a fixed order every prefix
    // would stay on its worker. Shuffled rounds move most prefixes between workers.
    const s = buildSchedule(12, 6, 7);
    const workersPerPrefix = Array.from({ length: 12 }, (_, p) => new Set(s.flatMap((x, i) => (x.prefix === p ? [i % 2] : []))).size);
    expect(workersPerPrefix.filter((n) => n === 2).length).toBeGreaterThanOrEqual(9);
  });

  it('is reproducible from its seed', () => {
    expect(buildSchedule(5, 3, 1)).toEqual(buildSchedule(5, 3, 1));
    expect(buildSchedule(5, 3, 1)).not.toEqual(buildSchedule(5, 3, 2));
  });
});

describe('buildPrompts', () => {
  it('prefixes have --prefix-tokens words and differ from their first word on', () => {
    const p = buildPrompts({ prefixes: 4, prefixTokens: 1500, seed: 9 });
    expect(p.prefixWords).toBe(1500);
    for (const text of p.prefixes) expect(text.split(/\s+/)).toHaveLength(1500);
    expect(new Set(p.prefixes.map((t) => t.split(' ').slice(0, 2).join(' '))).size).toBe(4);
  });

  it('every send of a prefix starts with the same prefix and ends with its own tail', () => {
    const p = buildPrompts({ prefixes: 2, prefixTokens: 64, seed: 3 });
    const sends = [0, 1, 2, 3].map((r) => p.prompt(1, r));
    for (const s of sends) expect(s.startsWith(`${p.prefixes[1]}\n\n`)).toBe(true);
    expect(new Set(sends).size).toBe(4);
    expect(p.tailWords(1, 0)).toBe(sends[0].split(/\s+/).length - 64);
  });

  it('another seed gives other prompts, so an earlier probe\'s cache never counts as a hit', () => {
    const a = buildPrompts({ prefixes: 1, prefixTokens: 32, seed: 1 });
    const b = buildPrompts({ prefixes: 1, prefixTokens: 32, seed: 2 });
    expect(a.prefixes[0]).not.toBe(b.prefixes[0]);
    expect(buildPrompts({ prefixes: 1, prefixTokens: 32, seed: 1 }).prefixes[0]).toBe(a.prefixes[0]);
  });

  it('the same seed with another run tag: the same words after a different opening', () => {
    const a = buildPrompts({ prefixes: 2, prefixTokens: 32, seed: 1, tag: 'run1' });
    const b = buildPrompts({ prefixes: 2, prefixTokens: 32, seed: 1, tag: 'run2' });
    expect(a.prefixes[0].startsWith('Document 1 of probe run1: ')).toBe(true);
    expect(b.prefixes[0]).toBe(a.prefixes[0].replace('run1', 'run2'));
    expect(b.prompt(1, 3)).toBe(a.prompt(1, 3).replace('run1', 'run2'));
  });
});
