import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, cli, json, MODEL, ourEngines, records, upOnCpu } from './helpers.js';

// `up agg --device cpu` on the real engine: the one-worker recipe a user starts first, through the
// built binary. One worker start (~3 GB, 1-2 minutes idle): ready by its real KV line, the curl up
// prints answers when pasted, status says ready, teardown leaves no VLLM:: process. agg-router.test.ts
// covers the router, doctor, probe and restarts; this covers the recipe it does not start.

afterEach(cleanup);

describe('agg on vLLM\'s CPU build', () => {
  it('ready by the real KV line, the printed curl answers, status ready, teardown leaves no VLLM:: process', async () => {
    const { home, base, up } = await upOnCpu('agg');

    // One worker, its real KV line (1 GiB at 512 bytes/token), recorded and said.
    const rec = records(home.stateDir)[0];
    expect(rec.recipe).toBe('agg');
    const workers = rec.processes.filter((p) => p.role === 'agg');
    expect(workers.map((p) => [p.name, p.kvTokens])).toEqual([['agg-0', 2_097_152]]);
    expect(up.stdout).toContain('KV 2,097,152 tokens');
    expect(workers[0].descendants.map((d) => d.cmd.split(' ')[0])).toEqual(expect.arrayContaining(['VLLM::EngineCore', 'VLLM::Worker']));

    // The curl up printed, pasted as it is: the frontend's port, the model's path, an answer.
    const curl = up.stdout.split('\n').find((l) => l.trim().startsWith('curl '));
    expect(curl, up.stdout).toBeDefined();
    expect(curl).toContain(`http://127.0.0.1:${base}/v1/`);
    expect(curl).toContain(MODEL());
    const answer = JSON.parse(execSync(curl!, { encoding: 'utf8', shell: '/bin/bash', timeout: 120_000 })) as { choices: unknown[] };
    expect(answer.choices.length).toBeGreaterThan(0);

    // Our readiness wrote no 503 trace into the worker's log.
    expect(readFileSync(workers[0].log, 'utf8').match(/tower_http::trace::on_failure/g) ?? []).toEqual([]);
    const st = json<{ runs: { state: string }[] }>(await cli(['status', '--json'], home)).runs[0];
    expect(st.state).toBe('ready');

    const td = await cli(['teardown', '--json'], home, 180_000);
    expect(td.code, td.stdout + td.stderr).toBe(0);
    expect(json<{ remaining: unknown[] }>(td).remaining).toEqual([]);
    expect(ourEngines(home)).toEqual([]);
  }, 1_200_000); // one worker start: 1-2 minutes on an idle 2-core machine, 5-8 at load 12
});
