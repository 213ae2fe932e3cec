import { describe, expect, it } from 'vitest';
import { NeedleSearch, newMatches, rarestWindow } from '../../../src/diagnose/needle-search.js';
import { NEEDLE_WINDOWS } from '../../../src/diagnose/needle-windows.js';
import { NEEDLE_SEARCH, SCAN_NEEDLES } from '../../../src/diagnose/scanner.js';
import { TYPICAL_LINES } from '../../../src/diagnose/typical-lines.js';

// The scan's fingerprint windows are chosen in advance (needle-windows.ts), so no thread spends
// its start choosing them. A stale choice would only be slower; a wrong one must never miss a needle.

const REGENERATE = 'stale: run `npm run build && node scripts/needle-windows.mjs`';

describe('the fingerprint windows chosen in advance', () => {
  it('are rarestWindow\'s choice for every needle of the scan, and only for those', () => {
    const typical = TYPICAL_LINES.join('\n');
    const texts = [...new Set(SCAN_NEEDLES.map((n) => n.text))];
    expect(Object.keys(NEEDLE_WINDOWS).sort(), REGENERATE).toEqual(texts.sort());
    for (const t of texts) expect(NEEDLE_WINDOWS[t], `${t}: ${REGENERATE}`).toBe(rarestWindow(t, typical));
  });

  it('give the scan the tables it would choose itself', () => {
    expect(NEEDLE_SEARCH.tables()).toEqual(new NeedleSearch(SCAN_NEEDLES, TYPICAL_LINES.join('\n')).tables());
  });

  it('are chosen afresh where one does not fit its needle, and the needle is still found', () => {
    const text = Buffer.from('the driver is too old, really too old\n');
    const found = (windows: Record<string, number>) => {
      const out = newMatches();
      const n = new NeedleSearch([{ text: 'too old', mask: 1 }, { text: 'really too old', mask: 2 }], '', windows).search(text, 0, text.length, out);
      return Array.from(out.at.subarray(0, n)).sort((a, b) => a - b);
    };
    const right = found({});
    expect(right).toEqual([14, 23, 30]);
    // 'too old' has 7 bytes: its only window starts at 0; 'really too old' fits windows 0 to 7.
    for (const bad of [1, -1, 0.5, Number.NaN]) expect(found({ 'too old': bad }), String(bad)).toEqual(right);
    expect(found({ 'really too old': 8 })).toEqual(right);
    expect(found({ 'really too old': 7 })).toEqual(right);
  });
});
