import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { truncateWords, visibleLength, wrapParts, wrapWords } from '../../../src/ui/fit.js';
import { logMessage } from '../../../src/ui/log-message.js';
import { SAMPLES } from '../../helpers/cli.js';

describe('logMessage: the message of a real log line', () => {
  it('vLLM engine lines lose the (EngineCore pid=N) prefix, level, time and file', () => {
    const lines = readFileSync(join(SAMPLES, 'logs', 'worker-agg-ready.log'), 'utf8').split('\n');
    const kv = lines.find((l) => l.includes('GPU KV cache size'))!;
    expect(kv.startsWith('(EngineCore pid=')).toBe(true);
    expect(logMessage(kv)).toBe('GPU KV cache size: 14,816 tokens');
    expect(logMessage('INFO 10-07 05:12:09 [model.py:1510] Using max model len 4096')).toBe('Using max model len 4096');
  });

  it('Dynamo\'s Rust tracing lines lose time, level and target; colour codes go too', () => {
    const lines = readFileSync(join(SAMPLES, 'logs', 'worker-lock-wait.log'), 'utf8').split('\n');
    expect(logMessage(lines[0])).toBe('Starting vLLM worker model="Qwen/Qwen3-0.6B" disaggregation_mode="agg"');
    expect(logMessage(lines[1])).toMatch(/^Still waiting to acquire lock on \/home\/exp\/.*\(elapsed: 10.1 seconds\)$/);
    expect(logMessage('\u001b[36m(EngineCore_DP0 pid=9)\u001b[0m WARNING 10-07 05:12:09 [x.py:1] careful')).toBe('careful');
  });
});

describe('fitting text to a width', () => {
  it('wraps at word boundaries with a hanging indent, keeps `quoted commands` whole', () => {
    const text = '! Model cached  the 2 workers would all download it at start; fix: run `hf download Qwen/Qwen3-0.6B` first';
    const lines = wrapWords(text, 40, '    ');
    expect(lines.join(' ').replace(/ +/g, ' ')).toBe(text.replace(/ +/g, ' '));
    for (const l of lines) expect(visibleLength(l)).toBeLessThanOrEqual(40);
    expect(lines.some((l) => l.includes('`hf download Qwen/Qwen3-0.6B`'))).toBe(true);
    expect(lines.slice(1).every((l) => l.startsWith('    '))).toBe(true);
  });

  it('a token too long for a continuation line stays whole, alone at column 0 (the terminal soft-wraps it there)', () => {
    const path = `/tmp/${'x'.repeat(60)}/agg-1.log`;
    expect(wrapWords(`log: ${path}`, 30, '  ')).toEqual(['log:', path]);
    // Exactly the room of a continuation line: it stays under the gutter; one more column and it moves.
    expect(wrapWords(`log: ${'y'.repeat(28)}`, 30, '  ')).toEqual(['log:', `  ${'y'.repeat(28)}`]);
    expect(wrapWords(`log: ${'y'.repeat(29)}`, 30, '  ')).toEqual(['log:', 'y'.repeat(29)]);
  });

  it('a long `quoted command` goes alone on its line without backticks; the prose goes on under the gutter', () => {
    const cmd = `--kv-events-config '{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:20080","enable_kv_cache_events":true}'`;
    const lines = wrapWords(`    fix: give each worker the engine flag \`${cmd}\` (a distinct port per worker), or (\`${cmd}\`), then retry`, 80, '         ');
    expect(lines).toEqual([
      '    fix: give each worker the engine flag',
      cmd,
      '         (a distinct port per worker), or (',
      cmd,
      '         ), then retry',
    ]);
    // Pasted into a shell the command line is one word list, no backtick substitution.
    expect(lines.filter((l) => l.length > 80)).toEqual([cmd, cmd]);
  });

  it('truncates after a whole word with an ellipsis, exactly to the width', () => {
    expect(truncateWords('hello world this is long', 12)).toBe('hello world…');
    expect(truncateWords('hello world this is long', 14)).toBe('hello world…');
    expect(truncateWords('fits', 4)).toBe('fits');
    expect(visibleLength(truncateWords('a'.repeat(50), 10))).toBe(10);
  });
});

describe('wrapParts: a line of parts (doctor\'s machine line) wraps between its parts first', () => {
  const parts = ['Debian GNU/Linux 12', 'Intel Xeon® Processor (2 cores)', '23.5 GiB RAM', 'Node v20.20.2'];
  it('the 84-column machine line at 80: the last part goes to an indented line; at 84 one line', () => {
    expect(wrapParts(parts, ' · ', 80, '  ')).toEqual(['Debian GNU/Linux 12 · Intel Xeon® Processor (2 cores) · 23.5 GiB RAM', '  Node v20.20.2']);
    expect(wrapParts(parts, ' · ', 84, '  ')).toEqual([parts.join(' · ')]);
    expect(wrapParts(parts, ' · ', Infinity, '  ')).toEqual([parts.join(' · ')]);
  });
  it('a part longer than a line wraps at its words, and the next part follows its last line', () => {
    const out = wrapParts(['an operating system with a name of many words', 'x86', '1 GiB'], ' · ', 20, '  ');
    expect(out).toEqual(['an operating system', '  with a name of', '  many words · x86', '  1 GiB']);
    for (const l of out) expect(visibleLength(l)).toBeLessThanOrEqual(20);
  });
  it('no parts: no line', () => {
    expect(wrapParts([], ' · ', 80)).toEqual([]);
  });
});
