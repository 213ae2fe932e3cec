import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { freeBlock } from '../helpers/ports.js';
import { groupMembersWith } from '../helpers/runs.js';

// Issue 12, cause 1: `up --script` must never run recipe text as code. Hostile values that are
// valid (a model path full of shell syntax, arguments and env values that are commands) are
// quoted so bash passes them on byte for byte; hostile values that are not valid (a newline in a
// name, an env key that is an assignment, control characters) are refused with exit 2.


const homes: ReturnType<typeof tempHome>[] = [];
const started: ChildProcess[] = [];
const groups: number[] = [];
/** RUN_DIR=... as the script's processes inherit it: what makes a group member this test's. */
let mine = '';
afterEach(() => {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const g of groups.splice(0)) if (groupMembersWith(g, mine).length > 0) try { process.kill(-g, 'SIGKILL'); } catch { /* gone */ }
  for (const h of homes.splice(0)) h.cleanup();
});

function home() {
  const h = tempHome('dd-hostile-');
  homes.push(h);
  const marks = join(h.dir, 'marks');
  mkdirSync(marks);
  return { ...h, marks, mark: (n: number) => join(marks, `M${n}`) };
}

/** Every way shell text could run: substitutions, separators, quotes breaking out, globs, history. */
function payloads(mark: (n: number) => string): string[] {
  return [
    `$(touch ${mark(1)})`, `\`touch ${mark(2)}\``, `'; touch ${mark(3)}; '`, `"; touch ${mark(4)}; "`,
    `x;touch ${mark(5)}`, `|touch ${mark(6)}`, `&& touch ${mark(7)}`, `\\$(touch ${mark(8)})`, `$((6*7))`, '*', '~root', '!!', "it's", '$HOME',
  ];
}

const procArgv = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
const procEnv = (pid: number) => Object.fromEntries(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));

describe('cause 1: up --script of hostile recipes', () => {
  it('runs to ready against the fakes with shell syntax in the model, args and env: nothing executes, every value arrives byte for byte', async () => {
    const h = home();
    // 31,000-32,699: apart from up.test.ts and up-script.test.ts, below the ephemeral range.
    const base = await freeBlock(31_000, 170, 10, [0, 1, 5]);
    const p = payloads(h.mark);
    // No `"` or `\` in the model: the frontend's JSON would escape them, and the ready check matches the id as listed.
    const model = `/models/$(touch ${h.mark(20)})/\`touch ${h.mark(21)}\`/it's;|&<>*?!~{}[]$HOME`;
    const recipe = {
      name: 'hostile', model, engine: 'vllm', startup: 'parallel',
      frontend: { httpPort: base, routerMode: 'kv', args: p },
      workers: [{ role: 'agg', gpuMemoryUtilization: 0.38, args: p, env: Object.fromEntries(p.map((v, i) => [`HOSTILE_${i}`, v])) }],
      ports: { system: base + 1, kvEvents: base + 5 },
    };
    const recipePath = join(h.dir, 'hostile.yaml');
    writeFileSync(recipePath, JSON.stringify(recipe)); // JSON is YAML: no YAML quoting to get wrong
    const env = fakeEnv(h, { gpu: 'laptop-570', python: true, vars: { FAKE_ENGINE_MAX_S: '120' } });
    const gen = await runCli(['up', recipePath, '--script'], env);
    expect(gen.stderr).toBe('');
    expect(gen.code).toBe(0);
    const script = join(h.dir, 'run.sh');
    writeFileSync(script, gen.stdout);

    mine = `RUN_DIR=${join(h.dir, 'run')}`;
    const bash = spawn('bash', [script], { cwd: h.dir, env: { ...env, RUN_DIR: join(h.dir, 'run') } as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(bash);
    let out = '';
    const pids: Record<string, number> = {};
    await new Promise<void>((resolve, reject) => {
      bash.stdout!.on('data', (d) => {
        out += d;
        for (const m of out.matchAll(/started (\S+) \(pid (\d+)\)/g)) {
          pids[m[1]] = Number(m[2]);
          if (!groups.includes(Number(m[2]))) groups.push(Number(m[2]));
        }
        if (out.includes('Ctrl-C stops everything')) resolve();
      });
      bash.stderr!.on('data', (d) => (out += d));
      bash.on('exit', (code) => reject(new Error(`script exited ${code} before ready:\n${out}`)));
    });
    // The ready line and the curl line print the model: as text, not as code.
    expect(out).toContain(`serves ${model} (run `);
    expect(out).toContain(`"model":"${model}"`);

    const worker = procArgv(pids['agg-0']);
    expect(worker.slice(worker.indexOf('--model'), worker.indexOf('--model') + 2)).toEqual(['--model', model]);
    expect(worker.slice(-p.length)).toEqual(p);
    const frontend = procArgv(pids.frontend);
    expect(frontend.slice(-p.length)).toEqual(p);
    const wenv = procEnv(pids['agg-0']);
    p.forEach((v, i) => expect(wenv[`HOSTILE_${i}`]).toBe(v));

    // Each group is this test's by RUN_DIR, so the check after the stop can tell.
    for (const g of groups) expect(groupMembersWith(g, mine).length).toBeGreaterThan(0);
    const exited = new Promise<number | null>((r) => bash.on('exit', (code) => r(code)));
    bash.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(readdirSync(h.marks)).toEqual([]);
    for (const g of groups) expect(groupMembersWith(g, mine)).toEqual([]);
  });

  it('refuses recipes whose text would need to be code (newline in the name, an env key that is an assignment, control characters): exit 2, one line, no script', async () => {
    const h = home();
    const base = { workers: [{ role: 'agg', gpuMemoryUtilization: 0.38 }] };
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['name with a newline', { ...base, name: `x\ntouch ${h.mark(1)}` }, /^.*hostile\.yaml: name: must be 1-64 letters, digits, "\.", "_" or "-".*\(got "x\\ntouch /],
      ['env key that is an assignment', { ...base, name: 'h', env: { [`X=$(touch ${h.mark(2)})`]: '1' } }, /env: "X=\$\(touch .*" is not an environment variable name/],
      ['worker env key with a space', { name: 'h', workers: [{ role: 'agg', env: { 'A B': '1' } }] }, /workers\.0\.env: "A B" is not an environment variable name/],
      ['model with a backtick and a newline', { ...base, name: 'h', model: `org/\`touch ${h.mark(3)}\`\nx` }, /model: must not contain control characters/],
      ['NUL in an argument', { name: 'h', workers: [{ role: 'agg', args: ['a\u0000b'] }] }, /workers\.0\.args\.0: must be an argument without control characters.*\(got "a\\u0000b"\)/],
      ['escape in an env value', { ...base, name: 'h', env: { X: '\u001b]0;title\u0007' } }, /env\.X: must be a value without control characters/],
      ['model read as an option', { ...base, name: 'h', model: '--trust-remote-code' }, /model: must not start with "-"/],
      ['python read as an option', { ...base, name: 'h', python: '-c' }, /python: must not start with "-"/],
    ];
    const env = fakeEnv(h);
    for (const [what, recipe, message] of cases) {
      const path = join(h.dir, 'hostile.yaml');
      writeFileSync(path, JSON.stringify(recipe));
      for (const flag of ['--script', '--dry-run']) {
        const r = await runCli(['up', path, flag], env);
        expect(r.code, `${what} ${flag}`).toBe(2);
        expect(r.stdout, what).toBe('');
        expect(r.stderr.trimEnd().split('\n'), what).toHaveLength(1);
        expect(r.stderr, what).toMatch(message);
      }
    }
    expect(readdirSync(h.marks)).toEqual([]);
    expect(existsSync(h.stateDir)).toBe(false); // nothing started, nothing recorded
  });
});
