/**
 * A minimal terminal screen: what a user sees at the end of a raw pty stream, for the cursor moves
 * ink's log-update writes (cursor up/down/column, erase line/below, CR, LF) and printable text
 * wrapped at `cols`. Other escape sequences (colours, modes) are dropped. Lines scroll without
 * limit (the scrollback is kept: it is what a user scrolls back to).
 */
export function screenOf(raw: string, cols: number): string[] {
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  const line = () => (lines[row] ??= []);
  // eslint-disable-next-line no-control-regex
  const token = /\u001b\[([0-?]*)([ -/]*)([@-~])|\u001b\][^\u0007]*\u0007|\u001b[=>78]|\r|\n|[^\u001b\r\n]/gu;
  for (const m of raw.matchAll(token)) {
    const t = m[0];
    if (m[3] !== undefined) {
      const n = Number(m[1] || '1');
      switch (m[3]) {
        case 'A': row = Math.max(0, row - n); break;
        case 'B': row += n; break;
        case 'G': col = Math.max(0, Number(m[1] || '1') - 1); break;
        case 'K': if (m[1] === '2') lines[row] = []; else line().length = Math.min(line().length, col); break;
        case 'J': line().length = Math.min(line().length, col); lines.length = Math.min(lines.length, row + 1); break;
        default: break;
      }
    } else if (t === '\r') col = 0;
    else if (t === '\n') {
      row++;
      col = 0;
    } else if (!t.startsWith('\u001b')) {
      if (col >= cols) {
        row++;
        col = 0;
      }
      const l = line();
      while (l.length < col) l.push(' ');
      l[col++] = t;
    }
    while (lines.length <= row) lines.push([]);
  }
  return lines.map((l) => l.join('').trimEnd());
}
