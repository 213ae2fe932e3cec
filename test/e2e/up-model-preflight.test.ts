import { afterEach, describe, expect, it } from 'vitest';
import { createServer as createHttp, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheQwen3, portBlock } from '../helpers/runs.js';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { stopRuns } from '../helpers/up-run.js';

// Preflight checks the model before anything starts (issue 25): a local folder holds config.json
// and a tokenizer, a hub id is cached or the hub answers (never offline). A fail is one line,
// exit 2, no run recorded. No test asks the real hub: fakeEnv points HF_ENDPOINT at a closed
// local port; a reachable hub is a local HTTP server here.

const homes: ReturnType<typeof tempHome>[] = [];
const servers: (Server | HttpServer)[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise<void>((r) => s.close(() => r()));
  for (const h of homes.splice(0)) {
    await stopRuns(h.stateDir, fakeEnv(h, { python: true }));
    h.cleanup();
  }
});

function home(vars: Record<string, string> = {}) {
  const h = tempHome('dd-model-pre-');
  homes.push(h);
  return { h, env: fakeEnv(h, { gpu: 'laptop-570', python: true, vars }) };
}

const nothingStarted = (stateDir: string) => !existsSync(join(stateDir, 'runs')) || readdirSync(join(stateDir, 'runs')).length === 0;
const oneLine = (stderr: string) => {
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  return lines[0];
};

/** A hub that answers HEAD /api/models/<id> with `status(id)`, recording what it was asked. */
async function hub(status: (path: string) => number): Promise<{ url: string; asked: string[] }> {
  const asked: string[] = [];
  const server = createHttp((req: IncomingMessage, res) => {
    asked.push(`${req.method} ${req.url}`);
    res.writeHead(status(req.url ?? ''), { 'content-type': 'application/json' });
    res.end();
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, asked };
}

describe('up: the model is checked before anything starts', () => {
  it('a local path that does not exist: one line naming it and the fix, exit 2, no run recorded', async () => {
    const { h, env } = home();
    const r = await runCli(['up', 'agg', '--model', './no-such-model'], env);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toMatch(/^dynamo-dev: model path \.\/no-such-model does not exist \(\/\S+\/no-such-model\); fix: fix the path \(the recipe's model, or --model PATH\)/);
    expect(nothingStarted(h.stateDir)).toBe(true);
  });

  it('a folder with config.json but no tokenizer: one line naming the folder and what is missing, exit 2 (--json too: nothing on stdout)', async () => {
    const { h, env } = home();
    const dir = join(h.dir, 'my-model');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), '{}');
    writeFileSync(join(dir, 'model.safetensors'), '');
    const r = await runCli(['up', 'agg', '--json', '--model', dir], env);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(oneLine(r.stderr)).toBe(
      `dynamo-dev: model folder ${dir} has config.json but no tokenizer (tokenizer.json, or tokenizer_config.json with its vocab files); ` +
      `fix: copy the model's tokenizer.json and tokenizer_config.json into ${dir}; or fix the path (the recipe's model, or --model PATH) to a folder with config.json and tokenizer.json, or give a hub id such as Qwen/Qwen3-0.6B`,
    );
    expect(nothingStarted(h.stateDir)).toBe(true);
  });

  it('a hub id not cached with HF_HUB_OFFLINE=1: one line with the download command, exit 2, nothing started', async () => {
    const { h, env } = home({ HF_HUB_OFFLINE: '1' });
    const r = await runCli(['up', 'agg'], env);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toBe(
      `dynamo-dev: model Qwen/Qwen3-0.6B is not in the Hugging Face cache (${h.hfCache}) and HF_HUB_OFFLINE=1 forbids downloading it; ` +
      'fix: `hf download Qwen/Qwen3-0.6B` (older huggingface_hub: `huggingface-cli download Qwen/Qwen3-0.6B`) with the network (HF_HUB_OFFLINE unset), or point HF_HUB_CACHE at a cache that holds it',
    );
    expect(nothingStarted(h.stateDir)).toBe(true);
  });

  it('a hub id not cached and the hub unreachable (a closed port): exit 2 naming the endpoint', async () => {
    const { h, env } = home();
    const r = await runCli(['up', 'agg'], env);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toMatch(/^dynamo-dev: model Qwen\/Qwen3-0\.6B is not in the Hugging Face cache \(.+\) and the hub cannot be reached \(http:\/\/127\.0\.0\.1:47: connection refused\); fix: `hf download Qwen\/Qwen3-0\.6B`/);
    expect(nothingStarted(h.stateDir)).toBe(true);
  });

  it('a cached hub id with HF_HUB_OFFLINE=1 passes: the preflight goes on (here stopped by a taken port, exit 1) and lists model.available first', async () => {
    const { h, env } = home({ HF_HUB_OFFLINE: '1' });
    cacheQwen3(h.hfCache);
    const base = await portBlock(24_000, 80);
    const taken: Server = createServer();
    servers.push(taken);
    await new Promise<void>((r) => taken.listen(base, '0.0.0.0', () => r()));
    const r = await runCli(['up', 'agg', '--json', '--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`], env, { timeoutMs: 25_000 });
    expect(r.code, r.stderr).toBe(1);
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    const pre = events.find((e) => e.event === 'preflight')!;
    expect(pre.checks[0]).toMatchObject({ id: 'model.available', status: 'pass' });
    expect(pre.checks[0].summary).toBe(`model Qwen/Qwen3-0.6B is in the Hugging Face cache (${join(h.hfCache, 'models--Qwen--Qwen3-0.6B', 'snapshots', 'c1899de')}), as HF_HUB_OFFLINE=1 needs`);
    expect(pre.checks.find((c: { id: string }) => c.id === 'ports.free').status).toBe('fail');
    expect(events.map((e) => e.event)).not.toContain('starting');
    expect(nothingStarted(h.stateDir)).toBe(true);
  });

  it('--no-preflight skips it: a missing path is not refused before the start', async () => {
    const { env } = home();
    const r = await runCli(['up', 'agg', '--model', './no-such-model', '--no-preflight', '--dry-run'], env);
    expect(r.code).toBe(0);
  });

  it('up mocker (the embedded model) offline and with no hub: the model passes and the run comes up', async () => {
    const { h, env } = home({ HF_HUB_OFFLINE: '1' });
    const base = await portBlock(24_000, 80);
    const r = await runCli(['up', 'mocker', '--detach', '--json', '--ready-timeout', '25', '--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`], env, { timeoutMs: 40_000 });
    const events = r.stdout.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>);
    const pre = events.find((e) => e.event === 'preflight')!;
    expect(pre.checks[0]).toMatchObject({ id: 'model.available', status: 'pass' });
    expect(pre.checks[0].summary).toMatch(/^model dynamo-dev\/tiny is dynamo-dev's embedded model \(.+\): nothing to download$/);
    if (pre.ok) {
      expect(r.code, r.stderr).toBe(0);
      expect(events.at(-1)).toMatchObject({ event: 'ready' });
    } else {
      // On a machine where other sessions' fakes run, procs.leftover may stop it; never the model.
      expect(pre.checks.filter((c: { status: string }) => c.status === 'fail').map((c: { id: string }) => c.id)).not.toContain('model.available');
    }
    await stopRuns(h.stateDir, env);
  });
});

describe('doctor model.available against a local hub', () => {
  it('not cached, the hub answers 200: pass, asked with HEAD on /api/models/<id>', async () => {
    const srv = await hub(() => 200);
    const { env } = home({ HF_ENDPOINT: `${srv.url}/` });
    const r = await runCli(['doctor', '--only', 'model.available', '--json'], env);
    expect(r.code, r.stdout).toBe(0);
    const c = JSON.parse(r.stdout).checks[0];
    expect(c.status).toBe('pass');
    expect(c.summary).toContain(`the hub has it (${srv.url})`);
    expect(srv.asked).toEqual(['HEAD /api/models/Qwen/Qwen3-0.6B']);
  });

  it('the hub answers 404: up refuses the id in one line, exit 2', async () => {
    const srv = await hub(() => 404);
    const { h, env } = home({ HF_ENDPOINT: srv.url });
    const r = await runCli(['up', 'agg', '--model', 'Qwen/No-Such-Model'], env);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toMatch(/the hub does not know it \(HEAD http:\/\/127\.0\.0\.1:\d+\/api\/models\/Qwen\/No-Such-Model: 404\); fix: check the id/);
    expect(nothingStarted(h.stateDir)).toBe(true);
  });

  it('cached: the hub is not asked at all', async () => {
    const srv = await hub(() => 500);
    const { h, env } = home({ HF_ENDPOINT: srv.url });
    cacheQwen3(h.hfCache);
    const r = await runCli(['doctor', '--only', 'model.available', '--json'], env);
    expect(JSON.parse(r.stdout).checks[0].status).toBe('pass');
    expect(srv.asked).toEqual([]);
  });
});

describe('bench: every variant\'s model before the first starts', () => {
  it('a missing model path: one line, exit 2, nothing started', async () => {
    const { h, env } = home();
    const r = await runCli(['bench', 'agg', '--model', './no-such-model'], env);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toMatch(/^dynamo-dev: model path \.\/no-such-model does not exist/);
    expect(nothingStarted(h.stateDir)).toBe(true);
    expect(existsSync(join(h.stateDir, 'bench'))).toBe(false);
  });
});
