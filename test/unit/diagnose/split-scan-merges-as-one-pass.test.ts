import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SAMPLES } from '../../helpers/cli.js';
import { Scanner, scanText } from '../../../src/diagnose/scanner.js';

// diagnose cuts a big log in two at a line end and scans the halves on two threads: what the
// second half found, merged into the first's scanner, must read exactly as one pass over the file
// (first occurrence, counts, the last KV size, the engine core's quote over the worker's, ids).

const LOGS = join(SAMPLES, 'logs');

/** Scans lines [0, cut) in one scanner and [cut, end) in another (numbered from 1), then merges. */
function splitScan(file: string, lines: string[], cut: number) {
  const first = new Scanner();
  first.addFile(file);
  lines.slice(0, cut).forEach((l, i) => first.feed(file, i + 1, l));
  const second = new Scanner();
  second.addFile(file);
  lines.slice(cut).forEach((l, i) => second.feed(file, i + 1, l));
  first.mergeFile(file, second.fileState(file)!, cut);
  first.setLines(file, lines.length);
  first.addBytes(Buffer.byteLength(lines.map((l) => `${l}\n`).join('')));
  return first.result();
}

const linesOf = (text: string) => text.split('\n').filter((l, i, all) => i < all.length - 1 || l !== '');

describe('a log scanned in two halves reads as one pass', () => {
  const samples = readdirSync(LOGS).filter((f) => f.endsWith('.log') || f.endsWith('.jsonl'));

  it.each(samples)('%s, cut at every line', (name) => {
    const text = readFileSync(join(LOGS, name), 'utf8');
    const lines = linesOf(text);
    const whole = scanText(name, text);
    for (let cut = 0; cut <= lines.length; cut++) expect(splitScan(name, lines, cut), `cut before line ${cut + 1}`).toEqual(whole);
  });

  it('the engine core quote of the second half wins over the first half worker quote, not the reverse', () => {
    const worker = "ERROR 10-07 05:41:38 [api_server.py:91] KeyError: 'worker side'";
    const engine = "(EngineCore_DP0 pid=51207) ERROR 10-07 05:41:37 [core.py:710] ValueError: 'engine side'";
    for (const lines of [[worker, 'INFO ok', engine, worker], [engine, 'INFO ok', worker, worker], [worker, engine, engine, worker], [worker, 'INFO ok', worker]]) {
      expect(scanText('w.log', lines.join('\n')).findings.map((f) => f.code)).toEqual(['python.exception']);
      const text = `${lines.join('\n')}\n`;
      for (let cut = 0; cut <= lines.length; cut++) expect(splitScan('w.log', lines, cut), `${lines.join(' | ')} cut ${cut}`).toEqual(scanText('w.log', text));
    }
  });

  it('the last KV size of the file is the second half one; a second half without one keeps the first', () => {
    const lines = ['INFO GPU KV cache size: 9,152 tokens', 'INFO x', 'INFO GPU KV cache size: 14,816 tokens', 'INFO y'];
    expect(splitScan('k.log', lines, 2).kvTokens['k.log']).toBe(14816);
    expect(splitScan('k.log', lines, 3).kvTokens['k.log']).toBe(14816);
    expect(splitScan('k.log', lines.slice(0, 2), 1).kvTokens['k.log']).toBe(9152);
  });

  it('a finding only in the second half is placed at its line in the whole file', () => {
    const lines = ['INFO a', 'INFO b', 'INFO c', 'OSError: [Errno 98] Address already in use'];
    const r = splitScan('p.log', lines, 3);
    expect(r.findings.map((f) => [f.code, f.line, f.count])).toEqual([['net.port-in-use', 4, 1]]);
  });
});
