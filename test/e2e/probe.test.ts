import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readStartTicks } from '../../src/run/proc.js';
import { writeRun } from '../../src/run/state.js';
import type { RunRecord } from '../../src/run/types.js';
import { BIN, fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { freePort, startFakeFrontend as startFake, type FakeFrontend } from '../helpers/fake-frontend.js';
import { openTerminal, stripTerm } from '../helpers/pty.js';
import { visibleLength } from '../../src/ui/fit.js';

// probe end to end: the built CLI against the fake frontend, whose routing simulation decides the
// hit rate (nothing is scripted: KV routing keeps prefixes on their worker, a router whose
// workers publish no KV events routes by load only).
//
// Every outcome here is fixed by construction, never a matter of luck: the probe's prompts and send
// order come from --seed, the fake's random choices from FAKE_FRONTEND_SEED (and its block hashes
// from PYTHONHASHSEED), and the fake gives a request's load back before the client sees the end of
// the answer, so its load-based choices do not depend on thread timing either. The same seeds give
// the same sends on every run (a test below checks that). What remains timing-based (hits judged by
// first-token time) has margins of a hundred milliseconds and more.

let home: ReturnType<typeof tempHome>;
let fe: FakeFrontend | null = null;
beforeEach(() => {
  home = tempHome('dd-probe-');
});
afterEach(async () => {
  if (fe) await fe.stop();
  fe = null;
  home.cleanup();
});

const SEED = ['--seed', '1'];
const SMALL = ['--prefixes', '8', '--repeats', '4', '--prefix-tokens', '256', ...SEED];
const startFakeFrontend = (args: string[], vars: Record<string, string | undefined> = {}) =>
  startFake(args, { FAKE_FRONTEND_SEED: '0', PYTHONHASHSEED: '0', ...vars });

/** A live agg-router run (two agg workers) whose frontend is `front`; its supervisor is this test process. */
async function writeLiveRun(front: FakeFrontend): Promise<void> {
  const proc = (name: string, role: string, pid: number | null, kvTokens: number | null) => ({
    name, role, pid, pgid: pid, startTicks: pid ? readStartTicks(pid) : null, startedAt: null, argv: [], env: {}, ports: {},
    gpuMemoryUtilization: null, state: 'ready', kvTokens, exitCode: null, signal: null, log: '', descendants: [],
  });
  const now = new Date().toISOString();
  const rec = {
    id: '20261130-101500-agg-router', recipe: 'agg-router', model: 'Qwen/Qwen3-0.6B', createdAt: now, updatedAt: now,
    supervisor: { pid: process.pid, startTicks: readStartTicks(process.pid), detached: false }, state: 'ready',
    frontendUrl: front.url, plan: { router: { mode: 'kv', kvEvents: true } },
    processes: [proc('frontend', 'frontend', front.child.pid!, null), proc('agg-0', 'agg', null, 14816), proc('agg-1', 'agg', null, 14816)],
  } as unknown as RunRecord;
  await writeRun(home.stateDir, rec);
}

describe('dynamo-dev probe', () => {
  it('KV router with events from both workers: high hit rate, one worker per prefix, verdict works, exit 0', async () => {
    // first sends ~26 ms longer than repeats, so the median comparison below holds on a loaded machine
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '2', FAKE_FRONTEND_TTFT_SCALE: '5' });
    const r = await runCli(['probe', '--url', fe.url, ...SMALL, '--json'], fakeEnv(home));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.verdict.code).toBe('works');
    expect(doc.model).toBe('Qwen/Qwen3-0.6B');
    expect(doc.requests).toEqual({ sent: 32, ok: 32, failed: 0 });
    expect(doc.settings.seed).toBe(1);
    expect(doc.hitRate).toBeGreaterThanOrEqual(0.95);
    expect(doc.method).toBe('cached_tokens');
    expect(doc.workers).toHaveLength(2);
    expect(doc.meanWorkersPerPrefix).toBe(1);
    expect(doc.prefixes).toHaveLength(8);
    expect(doc.sends[0]).toMatchObject({ repeat: 0, cachedTokens: 0, ok: true });
    expect(doc.ttft.repeatMedianMs).toBeLessThan(doc.ttft.firstMedianMs);
  });

  it('KV router expecting events from workers that publish none: random-level hit rate, points at kv.events, exit 1', async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '2', FAKE_FRONTEND_WORKER_KV_EVENTS: '0' });
    await fe.waitForLog(/kv_event_publisher_disabled/);
    const r = await runCli(['probe', '--url', fe.url, ...SMALL], fakeEnv(home));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/✗ hit rate at random level: the router is not using KV events \(check kv\.events\)/);
    expect(r.stdout).toMatch(/kv_event_publisher_disabled/);
    expect(r.stdout).toMatch(/^next: dynamo-dev doctor --only kv\.events$/m);
    expect(r.stdout).toMatch(/hit rate of repeats\s+\d+\/24/);
    expect(r.stdout).toMatch(/workers per prefix\s+\d\.\d on average, 2 workers seen/);
    // not a TTY: progress as plain lines on stderr, one per round
    expect(r.stderr.trim().split('\n')).toEqual(['round 1/4: 8/32 requests', 'round 2/4: 16/32 requests', 'round 3/4: 24/32 requests', 'round 4/4: 32/32 requests']);
  });

  it('same case as JSON: the verdict document names kv.events', async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '2', FAKE_FRONTEND_WORKER_KV_EVENTS: '0' });
    const r = await runCli(['probe', '--url', fe.url, ...SMALL, '--json'], fakeEnv(home));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    const doc = JSON.parse(r.stdout);
    expect(doc.verdict).toMatchObject({ code: 'random-level', next: 'dynamo-dev doctor --only kv.events' });
    expect(doc.affinity).toBeLessThan(0.8);
    expect(doc.meanWorkersPerPrefix).toBeGreaterThan(1.5);
  });

  it('the same --seed against the same frontend state gives the very same sends, workers and cache hits', async () => {
    const once = async () => {
      const f = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '2', FAKE_FRONTEND_WORKER_KV_EVENTS: '0' });
      try {
        const r = await runCli(['probe', '--url', f.url, ...SMALL, '--json'], fakeEnv(home));
        const doc = JSON.parse(r.stdout) as { sends: { prefix: number; repeat: number; workerId: string; cachedTokens: number }[]; hits: number };
        return { hits: doc.hits, sends: doc.sends.map((x) => `${x.prefix}.${x.repeat}@${x.workerId}:${x.cachedTokens}`) };
      } finally {
        await f.stop();
      }
    };
    const a = await once();
    const b = await once();
    expect(b).toEqual(a);
    expect(new Set(a.sends.map((x) => x.split('@')[1].split(':')[0])).size).toBe(2);
  });

  it('a rerun with the same --seed against the same frontend starts cold: no first send hits the earlier run\'s cache', async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '2' });
    const probe = async () => JSON.parse((await runCli(['probe', '--url', fe!.url, ...SMALL, '--json'], fakeEnv(home))).stdout) as { sends: { repeat: number; cachedTokens: number }[] };
    await probe();
    const again = await probe();
    const firsts = again.sends.filter((x) => x.repeat === 0);
    expect(firsts).toHaveLength(8);
    expect(firsts.map((x) => x.cachedTokens)).toEqual(Array(8).fill(0));
  });

  it('round-robin on a bare --url: random level, and the verdict says a router that ignores prefixes explains it', async () => {
    fe = await startFakeFrontend(['--router-mode', 'round-robin'], { FAKE_FRONTEND_WORKERS: '2' });
    const r = await runCli(['probe', '--url', fe.url, ...SMALL], fakeEnv(home));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/✗ hit rate at random level/);
    expect(r.stdout).toMatch(/does not run --router-mode kv \(round-robin and random ignore prefixes\), that alone explains it/);
  });

  it('approximate routing (--no-router-kv-events) works without any worker events', async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv', '--no-router-kv-events'], { FAKE_FRONTEND_WORKERS: '2', FAKE_FRONTEND_WORKER_KV_EVENTS: '0' });
    const r = await runCli(['probe', '--url', fe.url, ...SMALL, '--json'], fakeEnv(home));
    expect(JSON.parse(r.stdout).verdict.code).toBe('works');
    expect(fe.log()).not.toMatch(/kv_event_publisher_disabled/);
  });

  it('without cached_tokens in usage (Dynamo 1.3, 1.4), routing is judged by worker identity and the hit rate is said to be unknown', async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '2', FAKE_FRONTEND_SCENARIO: 'no-cached-tokens' });
    const r = await runCli(['probe', '--url', fe.url, '--prefixes', '8', '--repeats', '4', '--prefix-tokens', '1024', ...SEED, '--json'], fakeEnv(home));
    const doc = JSON.parse(r.stdout);
    expect(doc.method).toBeNull();
    expect(doc.hitRate).toBeNull();
    expect(doc.verdict.code).toBe('works');
    expect(doc.verdict.summary).toMatch(/^prefix routing works: 100% of repeats went back to their prefix's worker \(cache hits unknown: no cached_tokens\)$/);
    expect(doc.verdict.details[1]).toMatch(/^Hit rate unknown: the frontend reported no cached_tokens/);
    expect(r.code).toBe(0);
  });

  it('a negative cached_tokens is a broken answer, never counted: each send fails naming the field and value, no verdict of works (issue 29: it was accepted)', async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '2', FAKE_FRONTEND_SCENARIO: 'negative-cached-tokens' });
    const r = await runCli(['probe', '--url', fe.url, ...SMALL], fakeEnv(home));
    expect(r.stderr).toContain('the frontend sent usage.prompt_tokens_details.cached_tokens -1, which is not a token count (a whole number >= 0)');
    expect(r.stdout).toMatch(/^failed requests {5}3 of 3 \(first: .*cached_tokens -1, which is not a token count/m);
    expect(r.stdout).toMatch(/^hit rate of repeats 0\/0 \(n\/a\)$/m);
    expect(r.code).toBe(1);
  });

  it('a single worker: routing cannot be judged (inconclusive, exit 0)', async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '1' });
    const r = await runCli(['probe', '--url', fe.url, ...SMALL], fakeEnv(home));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/! one worker served every request: prefix routing cannot be judged with a single worker/);
  });

  it('without --url probes the live run\'s frontend, and warns when all prefixes fit in one worker\'s KV cache', async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '2' });
    await writeLiveRun(fe);
    const r = await runCli(['probe', ...SMALL], fakeEnv(home));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`dynamo-dev probe  ${fe.url}`);
    expect(r.stdout).toMatch(/✓ prefix routing works/);
    expect(r.stdout).toMatch(/note: all prefixes together \(2048 tokens\) fit in one worker's KV cache \(14816 tokens\)/);
  });

  it("the run has two workers but the router used one: inconclusive, the next step more prefixes, not 'use a recipe with two workers'", async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '1' });
    await writeLiveRun(fe);
    const r = await runCli(['probe', ...SMALL], fakeEnv(home));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/! every request went to one of the run's 2 workers: routing between workers was not tested/);
    expect(r.stdout).toMatch(/answered all 32 requests; the other worker answered none\./);
    expect(r.stdout).toContain('dynamo-dev probe --prefixes 16');
    expect(r.stdout).not.toContain('agg-router');
  });

  it('in an 80-column terminal the report wraps at word boundaries, the commands to copy whole; piped, lines stay whole', async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '1' });
    await writeLiveRun(fe);
    const term = openTerminal([process.execPath, BIN, 'probe', ...SMALL], fakeEnv(home, { vars: { NO_COLOR: undefined } }), { cols: 80, rows: 24 });
    try {
      expect(await term.exit).toBe(0);
    } finally {
      term.child.kill('SIGKILL');
    }
    const text = stripTerm(term.raw()).replace(/\r/g, '');
    const report = text.slice(text.indexOf('hit rate of repeats')).split('\n');
    expect(report.filter((l) => visibleLength(l) > 80)).toEqual([]);
    const at = report.findIndex((l) => l.startsWith('! every request went to one of'));
    expect(report.slice(at, at + 2)).toEqual(["! every request went to one of the run's 2 workers: routing between workers was", '  not tested']);
    expect(report).toContain('    the workers it knows: `dynamo-dev logs frontend | grep "Adding worker"`');
    expect(report).toContain('next: dynamo-dev probe --prefixes 16');
    // Piped: the same verdict on one line.
    const piped = await runCli(['probe', ...SMALL], fakeEnv(home));
    expect(piped.stdout).toContain("! every request went to one of the run's 2 workers: routing between workers was not tested\n");
  });

  it('unreachable URL: one clear line, exit 1', async () => {
    const port = await freePort();
    const r = await runCli(['probe', '--url', `http://127.0.0.1:${port}`, ...SMALL], fakeEnv(home));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`dynamo-dev: cannot reach the frontend at http://127.0.0.1:${port}: connection refused; start one with dynamo-dev up\n`.trimEnd());
  });

  it('a URL where another web server answers (HTML 404): one line that asks whether it is a Dynamo frontend, exit 1', async () => {
    const server: Server = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<!DOCTYPE HTML>\n<html>\n<head><title>Error response</title></head>\n<body>\n<h1>Error response</h1>\n<p>Error code: 404</p>\n</body>\n</html>\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const r = await runCli(['probe', '--url', url, ...SMALL], fakeEnv(home));
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`dynamo-dev: ${url}/v1/models answered HTTP 404: Error response; is ${url} a Dynamo frontend? (dynamo-dev status shows the run's URL)`);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('a frontend that stops answering: gives up after 3 failed requests in a row instead of waiting out every send', async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '2' });
    const r = await runCli(['probe', '--url', fe.url, '--model', 'no/such-model', ...SMALL, '--json'], fakeEnv(home));
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.requests).toEqual({ sent: 3, ok: 0, failed: 3 });
    expect(doc.notes).toContain('stopped after 3 failed requests in a row (3 of 32 sent)');
  });

  it('Ctrl-C while requests are in flight: the probe stops at once with one line, exit 130', async () => {
    // ~0.25 s per request: one send per round, so the first progress line proves it is under way
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '2', FAKE_FRONTEND_TTFT_SCALE: '20' });
    const child = execa(process.execPath, [BIN, 'probe', '--url', fe.url, '--prefixes', '1', '--repeats', '40', '--prefix-tokens', '512', ...SEED], {
      env: fakeEnv(home), extendEnv: false, reject: false, stdin: 'ignore', timeout: 20_000,
    });
    let err = '';
    await new Promise<void>((resolve) => {
      child.stderr!.on('data', (b: Buffer) => {
        err += b.toString();
        if (err.includes('round 1/40')) resolve();
      });
    });
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode).toBe(130);
    expect(r.stdout).not.toMatch(/hit rate/);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(/^dynamo-dev: probe interrupted after \d+ of 40 requests; nothing judged$/);
  });

  it('a URL that is not http(s) is an input error (exit 2)', async () => {
    const r = await runCli(['probe', '--url', 'localhost:8000'], fakeEnv(home));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--url: "localhost:8000" must start with http:\/\/ or https:\/\//);
  });

  it('a model the frontend does not serve: every request fails, the reason is shown, exit 1', async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '2' });
    const r = await runCli(['probe', '--url', fe.url, '--model', 'no/such-model', '--prefixes', '1', '--repeats', '2', '--prefix-tokens', '32'], fakeEnv(home));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/every request to http:\/\/127\.0\.0\.1:\d+ failed: .*HTTP 404: Model not found: no\/such-model/);
    expect(r.stdout).toMatch(/^hit rate of repeats\s+0\/0 \(n\/a\)$/m); // nothing judged: no "by cached_tokens" either
  });

  it('a frontend with no model listed yet says so (exit 1)', async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv'], { DYN_FILE_KV: join(home.dir, 'discovery') });
    const r = await runCli(['probe', '--url', fe.url, ...SMALL], fakeEnv(home));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/lists no model yet/);
  });
});

describe('fake frontend (fixture used by every e2e test)', () => {
  const MODEL = 'Qwen/Qwen3-0.6B';
  const health = async (url: string) => {
    const r = await fetch(`${url}/health`);
    return { status: r.status, body: (await r.json()) as { status: string; message?: string; endpoints?: string[]; instances: unknown[] } };
  };
  const waitFor = async (pred: () => Promise<boolean>, ms = 5000) => {
    const end = Date.now() + ms;
    while (!(await pred())) {
      if (Date.now() > end) throw new Error('condition not met in time');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('is healthy without workers (1.5+), counts a registered worker while its pid lives, and warns about a silent KV publisher', async () => {
    const kv = join(home.dir, 'discovery');
    fe = await startFakeFrontend(['--router-mode', 'kv', '--discovery-backend', 'file'], { DYN_FILE_KV: kv });
    expect(await fetch(`${fe.url}/live`).then((r) => r.json())).toMatchObject({ status: 'live' });
    expect(await health(fe.url)).toEqual({ status: 200, body: { status: 'healthy', endpoints: [], instances: [] } });
    expect(await fetch(`${fe.url}/v1/models`).then((r) => r.json())).toEqual({ object: 'list', data: [] });
    expect((await fetch(`${fe.url}/v1/models/${encodeURIComponent(MODEL)}/ready`)).status).toBe(404);

    // the registration contract: written atomically, live while its pid is (here: this test's own pid)
    const dir = join(kv, 'fake-workers');
    mkdirSync(dir, { recursive: true });
    const reg = { model: MODEL, pid: process.pid, system_port: 8081, role: 'agg', kv_events: false, worker_id: 4242 };
    writeFileSync(join(dir, `${process.pid}.json.tmp`), JSON.stringify(reg));
    renameSync(join(dir, `${process.pid}.json.tmp`), join(dir, `${process.pid}.json`));
    await waitFor(async () => (await health(fe!.url)).body.instances.length > 0);
    const generate = (await health(fe.url)).body.instances.filter((i) => (i as { endpoint: string }).endpoint === 'generate');
    expect(generate).toEqual([expect.objectContaining({ component: 'backend', endpoint: 'generate', namespace: 'dynamo', instance_id: 4242 })]);
    const models = (await fetch(`${fe.url}/v1/models`).then((r) => r.json())) as { data: { id: string; object: string }[] };
    expect(models.data.map((m) => [m.id, m.object])).toEqual([[MODEL, 'model']]);
    expect(await fetch(`${fe.url}/v1/models/${encodeURIComponent(MODEL)}/ready`).then((r) => r.json())).toEqual({
      model: MODEL, ready: true,
      namespaces: { dynamo: { ready: true, worker_types: { aggregated: { workers: 1, needs: [] } }, present: ['aggregated'], missing_worker_types: [] } },
    });
    const warn = await fe.waitForLog(/kv_event_publisher_disabled/);
    expect(warn).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z {2}WARN dynamo_llm::kv_router::indexer::recovery::source_health: KV-event publishing is disabled for a role that requires KV events diagnostic_code="kv_event_publisher_disabled" model="Qwen\/Qwen3-0\.6B" worker_role="aggregated" .*worker_id=4242 serving_endpoint="dynamo\/backend\/generate" kv_event_publishing_enabled=false/);

    // a registration whose process is gone does not count
    const dead = spawnSync('true').pid!;
    writeFileSync(join(dir, `${dead}.json`), JSON.stringify({ ...reg, pid: dead, worker_id: 5151 }));
    rmSync(join(dir, `${process.pid}.json`));
    await waitFor(async () => (await health(fe!.url)).body.instances.length === 0);
    expect((await health(fe.url)).status).toBe(200);
  });

  it('legacy-health: /health as up to 0.7, 503 "unhealthy" until a worker registers', async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_SCENARIO: 'legacy-health' });
    expect(await health(fe.url)).toEqual({ status: 503, body: { status: 'unhealthy', message: 'No endpoints available', instances: [] } });
  });

  it('logs JSON lines with DYN_LOGGING_JSONL=1 and exits 0 on SIGTERM', async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '1', FAKE_FRONTEND_WORKER_KV_EVENTS: '0', DYN_LOGGING_JSONL: '1' });
    const line = await fe.waitForLog(/kv_event_publisher_disabled/);
    expect(JSON.parse(line)).toMatchObject({ level: 'WARN', target: 'dynamo_llm::kv_router::indexer::recovery::source_health', diagnostic_code: 'kv_event_publisher_disabled', worker_role: 'aggregated', kv_event_publishing_enabled: false });
    const code = await fe.stop();
    fe = null;
    expect(code).toBe(0);
  });

  it('answers a non-streaming completion with usage.prompt_tokens_details.cached_tokens and nvext.worker_id', async () => {
    fe = await startFakeFrontend(['--router-mode', 'kv'], { FAKE_FRONTEND_WORKERS: '2' });
    const ask = async () => {
      const r = await fetch(`${fe!.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'word '.repeat(100) }], max_tokens: 3, nvext: { extra_fields: ['worker_id'] } }),
      });
      return (await r.json()) as { usage: { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } }; nvext: { worker_id: { prefill_worker_id: number } }; choices: unknown[] };
    };
    const a = await ask();
    const b = await ask();
    expect(a.usage.prompt_tokens_details.cached_tokens).toBe(0);
    expect(b.usage.prompt_tokens_details.cached_tokens).toBe(96); // 103 tokens: 6 whole blocks of 16
    expect(b.nvext.worker_id.prefill_worker_id).toBe(a.nvext.worker_id.prefill_worker_id);
    expect(a.choices).toHaveLength(1);
  });
});
