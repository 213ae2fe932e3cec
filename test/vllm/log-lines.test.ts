import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyLine, compileLogPattern } from '../../src/run/readiness.js';
import { KV_LINE_PATTERN } from '../../src/plan/types.js';
import { isEngineCoreLine } from '../../src/diagnose/line.js';
import { scanText } from '../../src/diagnose/scanner.js';
import { classifyEngineCmd } from '../../src/host/procs/engine-procs.js';
import { HERE, pyEnv, vllmPython } from './real.js';

// The lines readiness and diagnose wait for, written by the installed vLLM 0.31.0 and Dynamo 1.6.1
// code itself (test/vllm/real-lines.py: the real update_kv_cache_capacity through the logging
// vLLM's engine core configures under dynamo.vllm, the real set_process_title; the worker's own
// lines through Dynamo's configure_dynamo_logging), fed to our matchers as written: plain, in
// colour, and with the CRLF line ends a copied log may have. A changed format in the pinned
// release fails here.

/** What the real code writes (stdout and stderr together, in order), and the process title it set. */
function realOutput(mode: 'engine' | 'main', env: Record<string, string>): { lines: string[]; cmdline: string } {
  const out = execFileSync('/bin/sh', ['-c', '"$0" "$1" "$2" 2>&1', vllmPython(), join(HERE, 'real-lines.py'), mode], {
    encoding: 'utf8', env: pyEnv(env),
  });
  const lines = out.split('\n').filter((l) => l.length > 0);
  const last = JSON.parse(lines.pop()!) as { cmdline: string };
  return { lines, cmdline: last.cmdline };
}

const KV = compileLogPattern(KV_LINE_PATTERN);

describe('readiness and diagnose on the lines the real vLLM engine core writes', () => {
  const variants: [string, Record<string, string>][] = [
    ['NO_COLOR=1', { NO_COLOR: '1' }],
    ['colour forced (VLLM_LOGGING_COLOR=1)', { VLLM_LOGGING_COLOR: '1' }],
  ];
  for (const [what, env] of variants) {
    it(`the KV line (${what}): kv 14,816 tokens for readiness, plain and CRLF; diagnose's vllm.kv-size and KV value; an engine-core line`, () => {
      const { lines, cmdline } = realOutput('engine', env);
      const kv = lines.filter((l) => l.includes('KV cache size'));
      expect(kv, lines.join('\n')).toHaveLength(1);
      if (env.VLLM_LOGGING_COLOR) expect(kv[0]).toContain('\x1b[');
      expect(classifyLine(kv[0], KV)).toEqual({ kind: 'kv', tokens: 14816 });
      expect(classifyLine(`${kv[0]}\r`, KV)).toEqual({ kind: 'kv', tokens: 14816 });
      expect(isEngineCoreLine(kv[0])).toBe(true);
      for (const text of [lines.join('\n'), lines.join('\r\n')]) {
        const scan = scanText('agg-0.log', `${text}\n`);
        expect(scan.kvTokens['agg-0.log']).toBe(14816);
        expect(scan.findings.map((f) => [f.code, f.severity])).toEqual([['vllm.kv-size', 'info']]);
      }
      // The process title procs.leftover, teardown and the run marker look for (FACTS section 3).
      expect(cmdline).toBe('VLLM::EngineCore');
      expect(classifyEngineCmd(cmdline)).toBe('vllm-engine');
    }, 120_000);
  }

  it("the worker's own vLLM lines through Dynamo's logging (its own format, in colour even with NO_COLOR): a loading line", () => {
    const { lines } = realOutput('main', { NO_COLOR: '1' });
    const resolved = lines.filter((l) => l.includes('Resolved architecture'));
    expect(resolved, lines.join('\n')).toHaveLength(1);
    expect(classifyLine(resolved[0], KV)).toEqual({ kind: 'loading' });
  }, 120_000);
});
