import { describe, expect, it } from 'vitest';
import { cleanText, MAX_JSON_DEPTH, nestsDeeperThan, parseServerJson } from '../../../src/host/net/http-body.js';

describe('cleanText: server text a terminal prints as it is', () => {
  it('bidirectional controls go (a right-to-left override would reorder the rest of the line)', () => {
    const RLO = '\u202e';
    expect(cleanText(`model ${RLO}lmth.exe\u2066x\u2069\u200f\u061c`)).toBe('model lmth.exex');
  });
  it('other Unicode stays (accents, CJK, emoji, zero-width joiners)', () => {
    expect(cleanText('Qwen/通义 — café 👩‍💻')).toBe('Qwen/通义 — café 👩‍💻');
  });
});

describe('nesting past MAX_JSON_DEPTH is refused before JSON.parse', () => {
  const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  it('the boundary: 64 levels parse, 65 are refused', () => {
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(() => parseServerJson(nested(MAX_JSON_DEPTH + 1))).toThrow(/nested deeper than 64 levels/);
    expect(parseServerJson(nested(2))).toEqual([[]]);
  });
  it('brackets inside strings (escaped quotes too) do not count', () => {
    const text = JSON.stringify({ a: '['.repeat(500), b: 'say \\"[[[[\\"', c: [{ d: '{'.repeat(100) }] });
    expect(nestsDeeperThan(text)).toBe(false);
    expect(parseServerJson(text)).toEqual(JSON.parse(text));
  });
  it('objects count like arrays', () => {
    expect(nestsDeeperThan('{"a":'.repeat(65) + '1' + '}'.repeat(65))).toBe(true);
  });
});
