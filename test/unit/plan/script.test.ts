import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { loadRecipe, listBuiltinRecipes } from '../../../src/host/files/recipes.js';
import { buildPlan } from '../../../src/plan/build.js';
import { generateScript, shellQuote, toEre } from '../../../src/plan/script.js';

const RUN = '/state/runs/r1';
const scriptFor = async (name: string) => generateScript(buildPlan({ recipe: await loadRecipe(name), runDir: RUN, gpuTotalMiB: 8188 }));

describe('--script generator', () => {
  it('every built-in recipe yields a script bash accepts (bash -n)', async () => {
    for (const r of await listBuiltinRecipes()) {
      const text = await scriptFor(r.name);
      expect(() => execFileSync('bash', ['-n'], { input: text }), r.name).not.toThrow();
    }
  });

  it('quotes JSON flags and shell metacharacters so bash passes them unchanged', () => {
    expect(shellQuote('--model')).toBe('--model');
    expect(shellQuote('{"a":"tcp://*:1"}')).toBe(`'{"a":"tcp://*:1"}'`);
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote('')).toBe(`''`);
    expect(shellQuote('a\nb')).toBe(`$'a\\x0ab'`); // never a value spanning lines
    expect(() => shellQuote('a\u0000b')).toThrow(/NUL/);
    const args = ['{"kv_connector":"NixlConnector"}', "a'b", '$HOME', 'x y', 'new\nline', "back\\slash 'q' \u001b[2J"];
    const echoed = execFileSync('bash', ['-c', `printf '%s\\n' ${args.map(shellQuote).join(' ')}`]).toString();
    expect(echoed).toBe(`${args.join('\n')}\n`);
  });

  it('each process in its own group via setsid, a per-run DYN_FILE_KV, a trap that stops the groups', async () => {
    const text = await scriptFor('agg-router');
    expect(text).toMatch(/^#!\/usr\/bin\/env bash\n/);
    expect(text).toContain('set -euo pipefail');
    expect(text).toContain('exec setsid "$@" ) >>"$RUN_DIR/logs/$name.log" 2>&1 </dev/null &');
    expect(text).toContain('-e DYN_FILE_KV="$RUN_DIR"/discovery');
    expect(text).not.toContain(RUN);
    expect(text).toContain('trap cleanup EXIT');
    expect(text).toMatch(/kill -TERM -- "-\$pg"/);
    expect(text).toMatch(/kill -KILL -- "-\$pg"/);
  });

  it('waits on the log and the health endpoints, never with a fixed long sleep; agg-1 starts after agg-0\'s KV line', async () => {
    const text = await scriptFor('agg-router');
    const sleeps = [...text.matchAll(/sleep ([\d.]+)/g)].map((m) => Number(m[1]));
    expect(sleeps.every((s) => s <= 0.2)).toBe(true);
    const waitAgg0 = text.indexOf("wait_log agg-0 'GPU KV cache size: ([0-9,]+) tokens'");
    expect(waitAgg0).toBeGreaterThan(text.indexOf('start agg-0'));
    expect(waitAgg0).toBeLessThan(text.indexOf('start agg-1'));
    expect(text).toContain(`wait_http agg-1 http://127.0.0.1:8082/health -E '"status": *"ready"'`);
    expect(text).toContain('wait_http frontend "$FRONTEND_URL/v1/models" -F');
  });

  it('never writes recipe text where bash would run it: comment lines stay one line, env keys must be shell names', async () => {
    const plan = buildPlan({ recipe: await loadRecipe('agg'), runDir: RUN, gpuTotalMiB: 8188 });
    const hostile = { ...plan, recipe: 'x\ntouch /tmp/pwned #', model: 'm\n$(touch /tmp/pwned)' };
    const text = generateScript(hostile);
    expect(text.split('\n').filter((l) => l.includes('touch /tmp/pwned')).every((l) => l.startsWith('#') || /^[A-Z_]+=\$?'/.test(l))).toBe(true);
    expect(() => execFileSync('bash', ['-n'], { input: text })).not.toThrow();
    const badKey = { ...plan, processes: plan.processes.map((p) => ({ ...p, env: { ...p.env, 'X=$(touch /tmp/pwned)': '1' } })) };
    expect(() => generateScript(badKey)).toThrow(/environment key "X=\$\(touch \/tmp\/pwned\)" is not a shell variable name/);
  });

  it('the KV pattern becomes a POSIX ERE grep -E understands', () => {
    expect(toEre('GPU KV cache size: ([\\d,]+) tokens')).toBe('GPU KV cache size: ([0-9,]+) tokens');
    expect(toEre('took \\d+ s')).toBe('took [0-9]+ s');
  });
});
