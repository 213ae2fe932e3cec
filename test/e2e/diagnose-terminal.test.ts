import { afterEach, describe, expect, it } from 'vitest';
import { SIGNATURES } from '../../src/diagnose/signatures.js';
import { join } from 'node:path';
import { BIN, fakeEnv, runCli, SAMPLES, tempHome } from '../helpers/cli.js';
import { openTerminal, stripTerm, type Terminal } from '../helpers/pty.js';
import { visibleLength } from '../../src/ui/fit.js';

// diagnose as a person sees it in a real 80-column pseudo-terminal (script(1)): the explanation and
// the fix wrap at word boundaries under their label instead of being cut mid-word by the terminal,
// and the commands of a fix come out whole on one line. Piped, the same report keeps one line per field.

const homes: ReturnType<typeof tempHome>[] = [];
const terms: Terminal[] = [];
afterEach(() => {
  for (const t of terms.splice(0)) if (t.child.exitCode === null) t.child.kill('SIGKILL');
  for (const h of homes.splice(0)) h.cleanup();
});

const LOGS = ['worker-free-memory.log', 'worker-ucx-no-am.log'].map((f) => join(SAMPLES, 'logs', f));
const UCX_WHY = SIGNATURES.find((s) => s.code === 'ucx.no-am-transport')!.explanation;

describe('diagnose in an 80x24 terminal', () => {
  it('why and fix wrap under their label, no line reaches past column 80, commands stay whole', async () => {
    const h = tempHome('dd-diag-term-');
    homes.push(h);
    const env = fakeEnv(h, { vars: { NO_COLOR: undefined } });
    const term = openTerminal([process.execPath, BIN, 'diagnose', ...LOGS], env, { cols: 80, rows: 24 });
    terms.push(term);
    expect(await term.exit).toBe(1);
    const lines = stripTerm(term.raw()).replace(/\r/g, '').split('\n');
    // Every line fits: the terminal never had to break one (a path alone at column 0 may not, none here).
    expect(lines.filter((l) => visibleLength(l) > 80)).toEqual([]);
    const why = lines.findIndex((l) => l.startsWith('    why: UCX_TLS leaves'));
    expect(lines.slice(why, why + 3)).toEqual([
      '    why: UCX_TLS leaves NIXL no transport for its messages: only transports',
      '         without active messages (cuda_ipc, cuda_copy, cma: zcopy only;',
      '         UCX_TLS=cma,self, the example of Dynamo\'s check script, is one), or',
    ]);
    // The fix's commands: each on one line, whole (the export with its value too).
    const fix = lines.slice(lines.findIndex((l, i) => i > why && l.startsWith('    fix: ')));
    expect(fix.some((l) => l.includes('export UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp'))).toBe(true);
    expect(fix.some((l) => l.includes('`dynamo-dev doctor --only ucx.transports`'))).toBe(true);
    expect(lines.some((l) => l.includes('`dynamo-dev teardown --orphans`'))).toBe(true);
    // Logs named by path (no run): vLLM's flag with the free share the quoted line reports, whole on its line.
    expect(lines.some((l) => l.includes('--gpu-memory-utilization 0.3'))).toBe(true);
  });

  it('piped, the same report keeps each field on one line (scripts and grep see it whole)', async () => {
    const h = tempHome('dd-diag-pipe-');
    homes.push(h);
    const r = await runCli(['diagnose', ...LOGS], fakeEnv(h));
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n')).toContain(`    why: ${UCX_WHY}`);
  });
});
