import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeEnv, runCli, SAMPLES, tempHome } from '../helpers/cli.js';

const LOGS = join(SAMPLES, 'logs');
const EXPECTED: Record<string, { codes: string[]; exit: number }> = {
  'frontend-kv-events-disabled.jsonl': { codes: ['dynamo.kv-events-disabled'], exit: 0 },
  'frontend-kv-events-disabled.log': { codes: ['dynamo.kv-events-disabled'], exit: 0 },
  'worker-agg-ready.log': { codes: ['vllm.kv-size'], exit: 0 },
  'worker-combined-kv-line.log': { codes: ['vllm.kv-size'], exit: 0 },
  'worker-error804.log': { codes: ['cuda.error804'], exit: 1 },
  'worker-free-memory.log': { codes: ['vllm.free-memory'], exit: 1 },
  'worker-lock-wait.log': { codes: ['hf.lock-wait'], exit: 0 },
  'worker-ucx-no-am.log': { codes: ['ucx.no-am-transport'], exit: 1 },
};

let home: ReturnType<typeof tempHome>;
let env: Record<string, string | undefined>;
beforeEach(() => {
  home = tempHome('dd-e2e-diagnose-');
  env = fakeEnv(home);
});
afterEach(() => home.cleanup());

describe('dynamo-dev diagnose: the real NIXL 1.4.1 failures (test/fixtures/nixl)', () => {
  for (const [name, code, fix] of [
    ['shm-self', 'ucx.no-am-transport', 'export UCX_MM_ERROR_HANDLING=y'],
    ['not-tcp', 'ucx.no-am-transport', 'export UCX_MM_ERROR_HANDLING=y'],
    ['cma-self', 'ucx.no-am-transport', 'export UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp'],
    ['ud', 'ucx.error', 'UCX_TLS asks for transports this machine does not have (ud)'],
    ['cuda-ipc', 'ucx.error', 'UCX_TLS asks for transports this machine does not have (cuda_ipc)'],
  ]) {
    it(`${name}: ${code} ("Destination is unreachable" is its consequence), the fix for its line, exit 1`, async () => {
      const r = await runCli(['diagnose', '--json', join(SAMPLES, '..', 'nixl', `${name}.txt`)], env);
      expect(r.code).toBe(1);
      const doc = JSON.parse(r.stdout) as { findings: { code: string; fix: string; text: string }[] };
      expect(doc.findings.map((f) => f.code)).toEqual([code]);
      expect(doc.findings[0].fix).toContain(fix);
    });
  }
});

describe('dynamo-dev diagnose', () => {
  for (const [name, want] of Object.entries(EXPECTED)) {
    it(`${name}: ${want.codes.join(', ')} and exit ${want.exit}`, async () => {
      const r = await runCli(['diagnose', '--json', join(LOGS, name)], env);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(want.exit);
      const doc = JSON.parse(r.stdout);
      expect(doc.findings.map((f: { code: string }) => f.code)).toEqual(want.codes);
    });
  }

  it('--json is exactly {files, bytes, findings[{code, severity, count, file, line, text, explanation, fix}]}', async () => {
    const r = await runCli(['diagnose', '--json', join(LOGS, 'worker-free-memory.log'), join(LOGS, 'worker-agg-ready.log')], env);
    const doc = JSON.parse(r.stdout);
    expect(Object.keys(doc)).toEqual(['files', 'bytes', 'findings']);
    expect(doc.files).toBe(2);
    expect(doc.bytes).toBe(readFileSync(join(LOGS, 'worker-free-memory.log')).length + readFileSync(join(LOGS, 'worker-agg-ready.log')).length);
    for (const f of doc.findings) expect(Object.keys(f)).toEqual(['code', 'severity', 'count', 'file', 'line', 'text', 'explanation', 'fix']);
    expect(doc.findings[0]).toMatchObject({ code: 'vllm.free-memory', severity: 'error', count: 1, file: join(LOGS, 'worker-free-memory.log'), line: 1 });
    expect(doc.findings[1]).toMatchObject({ code: 'vllm.kv-size', severity: 'info', line: 11 });
  });

  it('a folder: each code once with its total count, errors first, in human text', async () => {
    const dir = join(home.dir, 'logs');
    mkdirSync(join(dir, 'old'), { recursive: true });
    for (const name of Object.keys(EXPECTED)) copyFileSync(join(LOGS, name), join(dir, name));
    writeFileSync(join(dir, 'old', 'agg-0.log.gz'), gzipSync(readFileSync(join(LOGS, 'worker-lock-wait.log'))));
    const r = await runCli(['diagnose', dir], env);
    expect(r.code).toBe(1);
    const out = r.stdout;
    expect(out.indexOf('Errors (3)')).toBeLessThan(out.indexOf('Warnings (2)'));
    expect(out.indexOf('Warnings (2)')).toBeLessThan(out.indexOf('Info (1)'));
    expect(out.match(/hf\.lock-wait /g)).toHaveLength(1);
    expect(out).toContain('hf.lock-wait  Waiting for a Hugging Face download lock  (4 times)');
    expect(out).toContain('vllm.kv-size  KV cache allocated  (2 times)');
    expect(out).toContain(`first at ${join(dir, 'worker-error804.log')}:2`);
    expect(out).toContain('fix: ');
    expect(out).toMatch(/9 files, [\d.]+ KiB scanned in \d+ ms: 3 errors, 2 warnings, 1 info$/);
    expect(out).not.toMatch(/\x1b\[/);
  });

  it('a healthy log: says so and exits 0', async () => {
    const f = join(home.dir, 'ok.log');
    writeFileSync(f, 'INFO 10-07 05:12:09 [model.py:1510] Using max model len 4096\n');
    const r = await runCli(['diagnose', f], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('No known failure signature found.');
  });

  it('a folder without log files is an input error (exit 2), never a false "no failure found"', async () => {
    const dir = join(home.dir, 'notes');
    mkdirSync(dir);
    writeFileSync(join(dir, 'README.md'), 'Error 804\n');
    writeFileSync(join(dir, 'frontend'), 'Error 804\n'); // a log without a log-like name: scanned only when named
    const r = await runCli(['diagnose', '--json', dir], env);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`dynamo-dev: ${dir}: no log files in this folder (looked for *.log, *.txt, *.jsonl, *.out, *.err`);
    expect(r.stderr).toContain('fix: name the log files themselves');
    const named = await runCli(['diagnose', '--json', join(dir, 'frontend')], env);
    expect(named.code).toBe(1);
    expect(JSON.parse(named.stdout).findings.map((f: { code: string }) => f.code)).toEqual(['cuda.error804']);
  });

  it('a damaged .gz in a folder: a warning on stderr, the other logs still judged; a named unreadable .gz alone: exit 2', async () => {
    const dir = join(home.dir, 'rotated');
    mkdirSync(dir);
    const gz = gzipSync(readFileSync(join(LOGS, 'worker-lock-wait.log')));
    writeFileSync(join(dir, 'agg-0.log.1.gz'), gz.subarray(0, gz.length - 10));
    copyFileSync(join(LOGS, 'worker-ucx-no-am.log'), join(dir, 'decode-0.log'));
    const r = await runCli(['diagnose', '--json', dir], env);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).findings.map((f: { code: string }) => f.code)).toContain('ucx.no-am-transport');
    expect(r.stderr).toMatch(new RegExp(`^dynamo-dev: warning: ${join(dir, 'agg-0.log.1.gz').replace(/[.]/g, '\\.')}: damaged gzip after \\d+ lines? \\(unexpected end of file\\); the lines before were scanned$`));

    writeFileSync(join(dir, 'plain.log.gz'), 'not gzip\n');
    const bad = await runCli(['diagnose', join(dir, 'plain.log.gz')], env);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr.trim()).toBe(`dynamo-dev: ${join(dir, 'plain.log.gz')}: not a readable gzip file (incorrect header check)`);
  });

  it('an empty log file is scanned and clean (exit 0)', async () => {
    const f = join(home.dir, 'empty.log');
    writeFileSync(f, '');
    const r = await runCli(['diagnose', '--json', f], env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ files: 1, bytes: 0, findings: [] });
  });

  it('a bad path: exit 2 with one line naming it', async () => {
    const missing = join(home.dir, 'nope.log');
    const r = await runCli(['diagnose', missing], env);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([`dynamo-dev: ${missing}: no such file or folder; pass log files or folders`]);
  });

  it('/proc and /sys hold no logs: one line naming the path and the file system, exit 2 (issue 29: /proc gave a raw EACCES from deep inside /proc/N); a link to /proc inside a log folder is not walked', async () => {
    for (const [path, fs] of [['/proc', 'proc'], ['/proc/self/status', 'proc'], ['/sys', 'sysfs']]) {
      const r = await runCli(['diagnose', path], env, { timeoutMs: 15_000 });
      expect([path, r.code, r.stdout, r.stderr]).toEqual([path, 2, '', `dynamo-dev: ${path}: is on the kernel's ${fs} file system, which holds no logs; pass log files or folders`]);
    }
    const dir = join(home.dir, 'with-a-link');
    mkdirSync(dir);
    copyFileSync(join(LOGS, Object.keys(EXPECTED)[0]), join(dir, 'worker.log'));
    symlinkSync('/proc', join(dir, 'proc'));
    const r = await runCli(['diagnose', '--json', dir], env, { timeoutMs: 15_000 });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout).files).toBe(1);
  });

  it('no path: the latest run\'s logs and how each process ended; a crash with no known signature still exits 1', async () => {
    const { writeFakeRun, deadPid } = await import('../helpers/proc-trees.js');
    const stateDir = home.stateDir;
    await writeFakeRun(stateDir, {
      id: '20261130-090000-agg', state: 'stopped', createdAt: '2026-11-30T09:00:00.000Z', supervisor: { pid: deadPid(), startTicks: 1 },
      processes: [{ name: 'agg-0', pid: null, startTicks: null }], logLines: { 'agg-0': readFileSync(join(LOGS, 'worker-error804.log'), 'utf8') },
    });
    const rec = await writeFakeRun(stateDir, {
      id: '20261130-100000-agg', state: 'failed', createdAt: '2026-11-30T10:00:00.000Z', supervisor: { pid: deadPid(), startTicks: 1 },
      processes: [{ name: 'frontend', pid: null, startTicks: null }, { name: 'agg-0', pid: null, startTicks: null, state: 'failed' }],
      logLines: { frontend: 'started\n', 'agg-0': 'Traceback (most recent call last):\nSomethingNew: nobody has seen this\n' },
    });
    // The fake run writer records no exit code: give agg-0 one, as the supervisor would.
    const path = join(stateDir, 'runs', rec.id, 'run.json');
    const doc = JSON.parse(readFileSync(path, 'utf8'));
    doc.processes[1] = { ...doc.processes[1], pid: 4242, exitCode: 3 };
    writeFileSync(path, JSON.stringify(doc));
    const r = await runCli(['diagnose'], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^run 20261130-100000-agg\n {2}frontend {2}never started\n {2}agg-0 {5}failed: exit code 3\n/);
    expect(r.stdout).toContain('dynamo-dev logs agg-0 --run 20261130-100000-agg -n 40');
    const old = await runCli(['diagnose', '--run', '20261130-090000-agg', '--json'], env);
    expect(old.code).toBe(1);
    const j = JSON.parse(old.stdout);
    expect(j.findings.map((f: { code: string }) => f.code)).toContain('cuda.error804');
    expect(j.run).toMatchObject({ id: '20261130-090000-agg' });
    const both = await runCli(['diagnose', '--run', 'x', join(LOGS, 'worker-error804.log')], env);
    expect(both.code).toBe(2);
    const empty = tempHome('dd-e2e-diag-none-');
    const none = await runCli(['diagnose'], fakeEnv(empty));
    empty.cleanup();
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no runs recorded in .*, so no logs to diagnose/);
  });
});

describe('dynamo-dev diagnose: a fix names the model the log names', () => {
  it('a download lock wait: `hf download Qwen/Qwen3-0.6B`, in --json and in the report', async () => {
    const log = join(LOGS, 'worker-lock-wait.log');
    const json = await runCli(['diagnose', '--json', log], env);
    const f = JSON.parse(json.stdout).findings.find((x: { code: string }) => x.code === 'hf.lock-wait');
    expect(f.fix).toContain('`hf download Qwen/Qwen3-0.6B`');
    const text = await runCli(['diagnose', log], env);
    expect(text.stdout).toContain('`hf download Qwen/Qwen3-0.6B`');
    expect(text.stdout).not.toContain('MODEL');
  });
});
