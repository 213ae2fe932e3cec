import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import chalk from 'chalk';
import { SAMPLES } from '../../helpers/cli.js';
import { scanPaths } from '../../../src/host/logs/log-scan.js';
import { renderDiagnosis } from '../../../src/ui/diagnose-report.js';
import { visibleLength, wrapFix, wrapWords } from '../../../src/ui/fit.js';
import type { Finding, ScanResult } from '../../../src/diagnose/types.js';

// diagnose's report on a terminal of 40, 80 and 120 columns, from the real sample logs: each field
// wraps under its label (never a word cut by the terminal), a command the fix names stays whole on
// one line, and piped (no width) every field is one line as before.

const LOGS = join(SAMPLES, 'logs');
const FILES = ['worker-free-memory.log', 'worker-ucx-no-am.log', 'frontend-kv-events-disabled.log', 'worker-lock-wait.log', 'worker-error804.log'];

let result: ScanResult;
beforeAll(async () => {
  chalk.level = 0;
  result = await scanPaths(FILES.map((f) => join(LOGS, f)));
  expect(result.findings.map((f) => f.code).sort()).toEqual(
    ['cuda.error804', 'dynamo.kv-events-disabled', 'hf.lock-wait', 'ucx.no-am-transport', 'vllm.free-memory'],
  );
});

const byCode = (code: string): Finding => result.findings.find((f) => f.code === code)!;
/** The backticked commands of a fix. */
const commands = (fix: string) => [...fix.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
/** The lines of one field: from its label to the line before the next field (continuations are indented deeper). */
function field(lines: string[], label: string, from = 0): string[] {
  const i = lines.findIndex((l, k) => k >= from && l.startsWith(`    ${label} `));
  expect(i, `no '${label}' line`).toBeGreaterThanOrEqual(0);
  const out = [lines[i]];
  for (let k = i + 1; k < lines.length && (lines[k].startsWith('      ') || (lines[k] !== '' && !lines[k].startsWith(' '))); k++) out.push(lines[k]);
  return out;
}
/** The words of a text: a command's trailing punctuation that wrapped to the next line joins it again. */
const words = (s: string) => s.replace(/`/g, '').replace(/\s+(?=[;,.)])/g, '').split(/\s+/).filter(Boolean);

describe.each([40, 80, 120])('diagnose report at %i columns', (width) => {
  let lines: string[];
  beforeAll(() => {
    lines = renderDiagnosis(result, 3, null, width).split('\n');
  });

  it('no line is wider than the terminal except a command or path that stands alone at column 0', () => {
    const fixCommands = result.findings.flatMap((f) => commands(f.fix));
    for (const l of lines.filter((x) => visibleLength(x) > width)) {
      expect(l.startsWith(' '), `over-wide line not at column 0: ${l}`).toBe(false);
      // Alone: a whole command of a fix, a flag with its value, or one token (a path), nothing else on the line.
      const alone = fixCommands.includes(l) || /^(--[\w.-]+|export) \S+$/.test(l) || !/\s/.test(l);
      expect(alone, `over-wide line is not one command or token: ${l}`).toBe(true);
    }
  });

  it('why and fix keep every word whole and in order, continuations hang under the text after the label', () => {
    for (const f of result.findings) {
      const at = lines.findIndex((l) => l.includes(` ${f.code}  `));
      const why = field(lines, 'why:', at);
      const fix = field(lines, 'fix:', at);
      expect(words(why.join(' '))).toEqual(words(`why: ${f.explanation}`));
      expect(words(fix.join(' '))).toEqual(words(`fix: ${f.fix}`));
      for (const l of [...why.slice(1), ...fix.slice(1)]) {
        if (l.startsWith(' ')) expect(l).toMatch(/^ {9}\S/);
      }
    }
  });

  it('each command of a fix is on one line, whole', () => {
    for (const f of result.findings) {
      const at = lines.findIndex((l) => l.includes(` ${f.code}  `));
      const fix = field(lines, 'fix:', at);
      for (const c of commands(f.fix)) expect(fix.some((l) => l.includes(c)), `${f.code}: ${c} split across lines`).toBe(true);
    }
    // Unquoted commands in prose too: a flag with its value, an export with its assignment.
    const free = field(lines, 'fix:', lines.findIndex((l) => l.includes(' vllm.free-memory  ')));
    // A log named by path (no run): vLLM's own flag, with the share of the GPU its line says is free (2.41/7.60 GiB).
    expect(free.some((l) => l.includes('--gpu-memory-utilization 0.3'))).toBe(true);
    const ucx = field(lines, 'fix:', lines.findIndex((l) => l.includes(' ucx.no-am-transport  ')));
    expect(ucx.some((l) => l.includes('export UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp'))).toBe(true);
  });

  it('the matched log line and the place wrap too, words whole', () => {
    const f = byCode('vllm.free-memory');
    const at = lines.findIndex((l) => l.includes(' vllm.free-memory  '));
    const quoted = field(lines, '>', at);
    expect(quoted.length).toBeGreaterThan(1);
    expect(words(quoted.join(' '))).toEqual(words(`> ${f.text}`));
    for (const l of quoted.slice(1)) expect(l).toMatch(/^ {6}\S/);
  });
});

describe('diagnose report without a width (piped)', () => {
  it('each field is one line, exactly as the finding says it', () => {
    const lines = renderDiagnosis(result, 3, null).split('\n');
    for (const f of result.findings) {
      expect(lines).toContain(`    why: ${f.explanation}`);
      expect(lines).toContain(`    fix: ${f.fix}`);
      expect(lines).toContain(`    > ${f.text}`);
    }
    expect(lines.at(-2)).toBe('5 files, ' + lines.at(-2)!.slice('5 files, '.length));
    expect(lines.some((l) => visibleLength(l) > 120)).toBe(true);
  });

  it('a wide terminal that fits everything prints the same text as a pipe', () => {
    expect(renderDiagnosis(result, 3, null, 10_000)).toBe(renderDiagnosis(result, 3, null));
  });
});

describe('wrapFix: a flag or export stays with its value', () => {
  const fix = 'make the fractions sum to what is free (e.g. --set workers.0.gpuMemoryUtilization=0.3) and start';
  it('where plain word wrapping would end a line on the flag, the flag moves down with its value', () => {
    // At 50 columns the plain wrap ends the first line on "--set": a paste of either line runs half a command.
    expect(wrapWords(fix, 50, '  ')[0]).toMatch(/--set$/);
    const lines = wrapFix(fix, 50, '  ');
    expect(lines[0]).toBe('make the fractions sum to what is free (e.g.');
    expect(lines[1]).toBe('  --set workers.0.gpuMemoryUtilization=0.3) and');
    expect(lines.join(' ').replace(/\s+/g, ' ')).toBe(fix);
  });

  it('export keeps its assignment; a flag before a quoted command or another flag is left to the quoting', () => {
    expect(wrapFix('include one: export UCX_TLS=cuda_ipc,tcp', 20)).toEqual(['include one:', 'export UCX_TLS=cuda_ipc,tcp']);
    expect(wrapFix('run --a --b `x y`', 9)).toEqual(['run --a', '--b `x y`']);
  });
});
