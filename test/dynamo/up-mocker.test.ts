import { afterEach, describe, expect, inject, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { scanProc } from '../../src/run/proc.js';
import { bindable } from '../helpers/ports.js';
import { cleanup, cli, expectCleanDiagnose, foreground, json, portBlock, portSets, python, realHome, records, survivors, upDetached } from './helpers.js';
import { EMBEDDED_MODEL } from '../../src/plan/embedded-model.js';

// `up mocker` as a new user runs it, against the released frontend and mocker: the built-in recipe
// unchanged (model Qwen/Qwen3-0.6B, here the tiny model in an offline Hugging Face cache), the
// venv's interpreter passed with --python, preflight on.

afterEach(cleanup);

// The mocker recipe's own model (models/hub in the package, src/plan/embedded-model.ts), served with no Hugging Face cache.
const MODEL = EMBEDDED_MODEL;

/** Live processes started with this home's state dir in their environment (what up would start). */
const startedFrom = (home: { stateDir: string }): number[] => scanProc().filter((p) => {
  try {
    return readFileSync(`/proc/${p.pid}/environ`, 'latin1').split('\0').includes(`DYNAMO_DEV_HOME=${home.stateDir}`);
  } catch {
    return false;
  }
}).map((p) => p.pid);

interface StatusDoc { runs: { id: string; state: string; processes: { name: string; alive: boolean; ready: boolean }[] }[] }
interface TeardownDoc { stopped: { name: string; pid: number; signal: string | null; ms: number }[]; remaining: unknown[] }

describe('up mocker with the released Dynamo (real frontend, real mockers)', () => {
  it('--detach: ready, the model listed, a completion answered, status all ready; teardown leaves no process and no port, with no SIGKILL; diagnose finds nothing', async () => {
    const home = realHome();
    const base = await portBlock();
    const up = await upDetached(['mocker', '--python', python(), ...portSets(base)], home);
    expect(up.code, up.stdout + up.stderr).toBe(0);
    expect(up.stdout).toMatch(/✓ ready in [\d.]+ s {2}run \S+-mocker/);
    expect(up.stdout).not.toContain('✗');

    const url = `http://127.0.0.1:${base}`;
    const models = (await (await fetch(`${url}/v1/models`)).json()) as { data: { id: string; object: string }[] };
    expect(models.data.map((m) => m.id)).toEqual([MODEL]);
    // The per-model readiness of 1.6 counts both workers.
    const ready = (await (await fetch(`${url}/v1/models/${encodeURIComponent(MODEL)}/ready`)).json()) as Record<string, any>;
    expect(ready).toMatchObject({ model: MODEL, ready: true, namespaces: { dynamo: { worker_types: { aggregated: { workers: 2 } } } } });

    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Hello!' }], max_tokens: 4 }),
    });
    expect(res.status).toBe(200);
    const completion = (await res.json()) as { choices: { message: { content: string | null }; finish_reason: string }[]; usage: { completion_tokens: number } };
    // The mocker simulates timing and KV, not text: its output ids are random u32s that the
    // tokenizer decodes to nothing (lib/mocker/src/common/sequence.rs, generate_token), so the
    // answer is a well-formed completion of 4 tokens with no content.
    expect(completion.choices).toHaveLength(1);
    expect(completion.choices[0].finish_reason).toBe('length');
    expect(completion.usage.completion_tokens).toBe(4);

    const st = json<StatusDoc>(await cli(['status', '--json'], home));
    expect(st.runs[0].state).toBe('ready');
    expect(st.runs[0].processes.map((p) => [p.name, p.alive, p.ready])).toEqual([['frontend', true, true], ['agg-0', true, true], ['agg-1', true, true]]);

    const td = await cli(['teardown', '--json'], home);
    expect(td.code, td.stderr).toBe(0);
    const doc = json<TeardownDoc>(td);
    expect(doc.remaining).toEqual([]);
    // Every process stopped on SIGTERM: none needed SIGKILL; so did the detached supervisor that watched them.
    expect(doc.stopped.map((s) => `${s.name} ${s.signal}`).sort()).toEqual(['agg-0 SIGTERM', 'agg-1 SIGTERM', 'frontend SIGTERM', 'supervisor SIGTERM']);
    expect(survivors(home.stateDir)).toEqual([]);
    expect(await Promise.all([base, base + 1, base + 2].map(bindable))).toEqual([true, true, true]);

    // The logs of a healthy run hold no error or warning finding.
    expect(await expectCleanDiagnose(home)).toBe(3);
  });

  it('foreground, Ctrl-C: every real process gone, exit 0 (the user asked to stop)', async () => {
    const home = realHome();
    const base = await portBlock();
    const up = foreground(['mocker', '--no-preflight', '--python', python(), ...portSets(base)], home);
    const ready = await up.waitEvent('ready');
    expect(ready.workers.map((w: { name: string }) => w.name)).toEqual(['agg-0', 'agg-1']);
    up.child.kill('SIGINT');
    const exit = await up.exit;
    expect(exit).toEqual({ code: 0, signal: null });
    const stopped = up.events.find((e) => e.event === 'stopped')!;
    expect(stopped.reason).toBe('user');
    expect(stopped.remaining).toEqual([]);
    expect(stopped.stopped.map((s: { signal: string }) => s.signal)).not.toContain('SIGKILL');
    expect(survivors(home.stateDir)).toEqual([]);
    expect(records(home.stateDir)[0].state).toBe('stopped');
    expect(await expectCleanDiagnose(home)).toBe(3);
  });

  it('a local model folder as the model: served under its path, ready from the instances /health lists', async () => {
    const home = realHome();
    const base = await portBlock();
    const folder = inject('modelDir');
    const up = await cli(['up', 'mocker', '--detach', '--no-preflight', '--json', '--python', python(), '--model', folder, ...portSets(base)], home);
    expect(up.code, up.stderr).toBe(0);
    const plan = up.stdout.trim().split('\n').map((l) => JSON.parse(l)).find((e) => e.event === 'plan').plan;
    // The 1.6.1 frontend answers 404 at /v1/models/<id>/ready for an id that starts with "/".
    expect(plan.processes[0].ready.modelReady).toBeUndefined();
    expect((await fetch(`http://127.0.0.1:${base}/v1/models/${encodeURIComponent(folder)}/ready`)).status).toBe(404);
    const models = (await (await fetch(`http://127.0.0.1:${base}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual([folder]);
    expect(json<StatusDoc>(await cli(['status', '--json'], home)).runs[0].state).toBe('ready');
    expect((await cli(['teardown'], home)).code).toBe(0);
    expect(await expectCleanDiagnose(home)).toBe(3);
  });

  it('bad input with the real venv: discovery mem, a system port of 40000: exit 2, one line, nothing started', async () => {
    const home = realHome();
    const base = await portBlock();
    const file = join(home.dir, 'mem.yaml');
    writeFileSync(file, 'name: mem\nengine: mocker\nmodel: Qwen/Qwen3-0.6B\ndiscovery: mem\nworkers:\n  - role: agg\n');
    const mem = await cli(['up', file, '--detach', '--python', python(), ...portSets(base)], home);
    const sys = await cli(['up', 'mocker', '--detach', '--python', python(), '--set', `frontend.httpPort=${base}`, '--set', 'ports.system=40000'], home);
    for (const [r, re] of [[mem, /^dynamo-dev: .*mem\.yaml: discovery: "mem" cannot work: /], [sys, /^dynamo-dev: mocker \(built-in\): ports\.system: must be <= 32767: /]] as const) {
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(re);
      expect(r.stdout).toBe('');
    }
    expect(records(home.stateDir)).toEqual([]);
    expect(startedFrom(home)).toEqual([]);
  });

  it('--python pointing at an interpreter without Dynamo: preflight names it, nothing started', async () => {
    const home = realHome();
    const base = await portBlock();
    const r = await cli(['up', 'mocker', '--python', 'python3', '--json', ...portSets(base)], home);
    expect(r.code).toBe(1);
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    const py = events.find((e) => e.event === 'preflight')!.checks.find((c: { id: string }) => c.id === 'python.env');
    expect(py).toMatchObject({ status: 'fail' });
    expect(py.summary).toMatch(/^python3 cannot import dynamo, dynamo\.frontend, dynamo\.mocker/);
    expect(events.map((e) => e.event)).not.toContain('starting');
    expect(records(home.stateDir)).toEqual([]);
  });

  it('doctor --python <venv>: python.env passes and names the real Dynamo version', async () => {
    const home = realHome();
    const r = await cli(['doctor', '--recipe', 'mocker', '--only', 'python.env', '--python', python(), '--json'], home);
    expect(r.code).toBe(0);
    const check = json<{ checks: { status: string; summary: string; evidence: { dynamo: { version: string; support: string } } }[] }>(r).checks[0];
    expect(check.status).toBe('pass');
    // Where Python found it: the venv's own site-packages, not some folder on PYTHONPATH.
    const site = join(dirname(dirname(python())), 'lib');
    expect(check.summary).toMatch(/dynamo 1\.6\.1 in \S+ \(verified\)$/);
    expect(check.summary).toContain(` in ${site}/python3.`);
    expect(check.evidence.dynamo).toMatchObject({ version: '1.6.1', support: 'verified' });
  });
});
