import { describe, expect, it } from 'vitest';
import { MIN_NEEDLE, NeedleSearch, newMatches, rarestWindow, type Needle } from '../../../src/diagnose/needle-search.js';
import { NEEDLE_SEARCH, WORKER_ID_NEEDLES } from '../../../src/diagnose/scanner.js';
import { TYPICAL_LINES } from '../../../src/diagnose/typical-lines.js';
import { SIGNATURES } from '../../../src/diagnose/signatures.js';

// The prefilter of every log scan: a needle it misses is a finding diagnose never reports.

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NEEDLES: Needle[] = [
  { text: 'too old', mask: 1 },
  { text: 'Error: ', mask: 2 },
  { text: 'Error 804', mask: 4 },
  { text: 'EngineCore failed to start', mask: 8 },
  { text: 'aaaaaaaaaa', mask: 16 }, // repeats its own fingerprints
];

/** Every (start, bits) of every needle in buf[start, end), the slow obvious way. */
function naive(buf: Buffer, start: number, end: number, needles: Needle[]): string[] {
  const out: string[] = [];
  for (const n of needles) {
    for (let at = buf.indexOf(n.text, start, 'latin1'); at !== -1 && at + n.text.length <= end; at = buf.indexOf(n.text, at + 1, 'latin1')) out.push(`${at}:${n.mask}`);
  }
  return out.sort();
}

function found(search: NeedleSearch, buf: Buffer, start: number, end: number, out = newMatches(4)): string[] {
  const n = search.search(buf, start, end, out);
  return Array.from({ length: n }, (_, i) => `${out.at[i]}:${out.bits[i]}`).sort();
}

describe('NeedleSearch', () => {
  it('finds every needle wherever it starts, in buffers at every byte offset and within any bounds', () => {
    const search = new NeedleSearch(NEEDLES, 'EngineCore pid=1 Error');
    const next = random(804);
    const alphabet = 'aEeor :tsl80\n4dfgnCi';
    for (let round = 0; round < 300; round++) {
      let text = '';
      while (text.length < 200) {
        text += next() < 0.2 ? NEEDLES[Math.floor(next() * NEEDLES.length)].text : alphabet[Math.floor(next() * alphabet.length)];
      }
      const pad = Math.floor(next() * 4);
      // A slice of a bigger buffer: its words are not aligned with the buffer's start.
      const buf = Buffer.from(`${'#'.repeat(pad)}${text}`, 'latin1').subarray(pad);
      const start = Math.floor(next() * 20);
      const end = buf.length - Math.floor(next() * 20);
      expect(found(search, buf, start, end), `round ${round}`).toEqual(naive(buf, start, end, NEEDLES));
    }
  });

  it('finds a needle that starts the range, and one that ends it, but none that crosses a bound', () => {
    const search = new NeedleSearch(NEEDLES);
    const buf = Buffer.from('Error 804 xx too old', 'latin1');
    expect(found(search, buf, 0, buf.length)).toEqual(['0:4', '13:1']);
    expect(found(search, buf, 1, buf.length - 1)).toEqual([]);
  });

  it('grows its output past the size it was given', () => {
    const search = new NeedleSearch(NEEDLES);
    const buf = Buffer.from('too old '.repeat(50), 'latin1');
    const out = newMatches(2);
    expect(search.search(buf, 0, buf.length, out)).toBe(50);
    expect(Array.from(out.at.subarray(0, 50))).toEqual(Array.from({ length: 50 }, (_, i) => i * 8));
  });

  it('takes needles of 7 printable ASCII characters or more, and nothing else', () => {
    expect(MIN_NEEDLE).toBe(7);
    expect(() => new NeedleSearch([{ text: 'abcdefg', mask: 1 }])).not.toThrow();
    expect(() => new NeedleSearch([{ text: 'abcdef', mask: 1 }])).toThrow(/needle 0 \("abcdef"\) must be printable ASCII of at least 7/);
    expect(() => new NeedleSearch([{ text: 'line\nbreak', mask: 1 }])).toThrow(/printable ASCII/);
    expect(() => new NeedleSearch([{ text: 'naïveté!', mask: 1 }])).toThrow(/printable ASCII/);
  });

  it('takes each needle\'s fingerprints where ordinary lines have least of it', () => {
    // "EngineCore" starts every engine line: fingerprints inside it would be checked on each.
    expect(rarestWindow('EngineCore failed to start', '(EngineCore pid=1) INFO x\n(EngineCore pid=2) INFO y')).toBeGreaterThanOrEqual(7);
    expect(rarestWindow('EngineCore failed to start', '')).toBe(0);
    expect(rarestWindow('too old', 'anything')).toBe(0); // a 7-character needle has one window
  });

  it('takes, for every needle of the scan, the earliest of its cheapest windows, counted the slow obvious way', () => {
    const typical = TYPICAL_LINES.join('\n');
    const count = (s: string) => {
      let n = 0;
      for (let at = typical.indexOf(s); at !== -1; at = typical.indexOf(s, at + 1)) n++;
      return n;
    };
    // An offset costs the times its 4 bytes occur, plus 100 times they occur followed by the needle's next 4 (or all it has left).
    const costOf = (needle: string, first: number) => {
      let c = 0;
      for (let o = first; o < first + 4; o++) c += count(needle.slice(o, o + 4)) + 100 * count(needle.slice(o, o + 8));
      return c;
    };
    for (const n of [...SIGNATURES.flatMap((s) => s.needles), ...WORKER_ID_NEEDLES]) {
      const costs = Array.from({ length: n.length - MIN_NEEDLE + 1 }, (_, first) => costOf(n, first));
      expect(rarestWindow(n, typical), n).toBe(costs.indexOf(Math.min(...costs)));
    }
    // Only the last window holds "ghij", which the text lacks.
    expect(rarestWindow('abcdefghij', 'abcdefghi')).toBe(3);
    // The first window's words are rarer, but one of them is followed in the text by the needle's
    // next 4 bytes (it would reach the full check each time): the second window costs less.
    expect(rarestWindow('abcdefghijk', 'efgh fghi ghij hijk fghi ghij hijk abcdefgh')).toBe(1);
    // The text's last 4 bytes count like any others.
    expect(rarestWindow('abcdefgh', 'abcd')).toBe(1);
    // The needle's last word has no bytes after it: each time the text holds it, it reaches the full check.
    expect(rarestWindow('abcdefgh', 'abcd abcd abcd efgh')).toBe(0);
  });
});

describe('the scan\'s needles', () => {
  it('every needle of every signature, alone, reports its signature\'s bit; worker-id needles theirs', () => {
    const bitsOf = (text: string) => {
      const out = newMatches();
      const n = NEEDLE_SEARCH.search(Buffer.from(text), 0, text.length, out);
      return Array.from(out.bits.subarray(0, n)).reduce((a, b) => a | b, 0);
    };
    SIGNATURES.forEach((s, i) => {
      for (const n of s.needles) expect(bitsOf(n) & (1 << i), `${s.code}: ${n}`).not.toBe(0);
    });
    const ownBits = WORKER_ID_NEEDLES.map(bitsOf);
    expect(new Set(ownBits).size).toBe(1);
    expect(ownBits[0] >> SIGNATURES.length).not.toBe(0); // above every signature's bit
  });

  it('has no more signatures than bits for them: 0-29 (bit 30 marks worker-id needles)', () => {
    expect(SIGNATURES.length).toBeLessThanOrEqual(30);
  });
});
