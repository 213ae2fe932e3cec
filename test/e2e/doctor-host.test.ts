import { spawn, type ChildProcess, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';
import { freePort, freeSystemPort } from '../helpers/ports.js';
import { killChildren } from '../helpers/children.js';

// doctor's host checks end to end through the built binary, against REAL conditions made by the
// test: a process titled VLLM::EngineCore, a flock held on the model's lock file, a listening
// socket on a planned port, and UCX_TLS with the fake ucx_info.

const PYTHON = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
const IDS = 'procs.leftover,hf.locks,ucx.transports,ports.free';

interface CheckJson { id: string; status: string; summary: string; details: string[]; fix: string | null; evidence: Record<string, unknown> }

let home: ReturnType<typeof tempHome>;
let recipePath: string;
let heldPort: number;
const children: ChildProcess[] = [];
const servers: Server[] = [];

async function listen(port = 0): Promise<number> {
  const s = createServer();
  servers.push(s);
  await new Promise<void>((r) => s.listen({ port, host: '0.0.0.0' }, () => r()));
  return (s.address() as { port: number }).port;
}



async function doctor(vars: Record<string, string | undefined> = {}): Promise<{ code: number; checks: Record<string, CheckJson> }> {
  const env = fakeEnv(home, { ucx: 'single-host', vars });
  const r = await runCli(['doctor', '--only', IDS, '--recipe', recipePath, '--json'], env);
  const doc = JSON.parse(r.stdout) as { ok: boolean; checks: CheckJson[] };
  expect(doc.checks.map((c) => c.id)).toEqual(IDS.split(','));
  return { code: r.code, checks: Object.fromEntries(doc.checks.map((c) => [c.id, c])) };
}

/** The model cached in the temp HF cache, as huggingface_hub lays it out. */
function cacheModel(): string {
  const dir = join(home.hfCache, 'models--Qwen--Qwen3-0.6B');
  const rev = 'c1899de289a04d12100db370d81485cdf75e47ca';
  mkdirSync(join(dir, 'refs'), { recursive: true });
  mkdirSync(join(dir, 'snapshots', rev), { recursive: true });
  writeFileSync(join(dir, 'refs', 'main'), rev);
  writeFileSync(join(dir, 'snapshots', rev, 'config.json'), '{}');
  const locks = join(home.hfCache, '.locks', 'models--Qwen--Qwen3-0.6B');
  mkdirSync(locks, { recursive: true });
  const lock = join(locks, 'a6e0b3bc1d16fb1a5aff0b8b6bbd9d87e2bd3a4f.lock');
  writeFileSync(lock, '');
  return lock;
}

beforeAll(async () => {
  home = tempHome('dd-e2e-host-');
  // Ports of our own choosing: the default 8000/8081 may be used by other tests on this machine.
  heldPort = await listen();
  const systemPort = await freeSystemPort();
  recipePath = join(home.dir, 'host.yaml');
  writeFileSync(recipePath, [
    'name: host-e2e',
    'model: Qwen/Qwen3-0.6B',
    'frontend:',
    `  httpPort: ${heldPort}`,
    'workers:',
    '  - role: agg',
    '    gpuMemoryUtilization: 0.38',
    // KV over NIXL (an offloading or P/D experiment): UCX_TLS matters to this recipe.
    `    args: ['--kv-transfer-config', '{"kv_connector":"NixlConnector","kv_role":"kv_both"}']`,
    'ports:',
    `  system: ${systemPort}`,
    '',
  ].join('\n'));
});

afterEach(async () => {
  await killChildren(children);
});

afterAll(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  home.cleanup();
});

describe('doctor host checks through the built CLI', () => {
  it('flags a real VLLM::EngineCore, a real held lock, a real taken port and UCX_TLS=cuda_ipc', async () => {
    const lock = cacheModel();
    const engine = spawn('sleep', ['300'], { argv0: 'VLLM::EngineCore', stdio: 'ignore' });
    children.push(engine);
    await once(engine, 'spawn');
    const holder = spawn(PYTHON, ['-c', 'import fcntl, sys\nf = open(sys.argv[1], "a")\nfcntl.flock(f, fcntl.LOCK_EX)\nprint("locked", flush=True)\nsys.stdin.read()\n', lock], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(holder);
    await once(createInterface({ input: holder.stdout! }), 'line');

    const { code, checks } = await doctor({ UCX_TLS: 'cuda_ipc' });
    expect(code).toBe(1);

    const procs = checks['procs.leftover'];
    expect(procs.status).toBe('fail');
    const listed = procs.evidence.processes as { pid: number; cmd: string; kind: string; ageMs: number }[];
    expect(listed.find((p) => p.pid === engine.pid)).toMatchObject({ cmd: 'VLLM::EngineCore 300', kind: 'vllm-engine' });
    expect(procs.details.some((d) => d.startsWith(`pid ${engine.pid}  `))).toBe(true);
    expect(procs.fix).toContain('dynamo-dev teardown --orphans');

    const hf = checks['hf.locks'];
    expect(hf.status).toBe('fail');
    expect(hf.summary).toContain(`held by pid ${holder.pid}`);
    expect(hf.fix).toContain(`kill ${holder.pid}`);

    const ucx = checks['ucx.transports'];
    expect(ucx.status).toBe('fail');
    expect(ucx.summary).toContain('UCX_TLS=cuda_ipc leaves no active-message transport');

    const ports = checks['ports.free'];
    expect(ports.status).toBe('fail');
    // The listener lives in this test process: its pid and command line.
    expect(ports.summary).toContain(`port ${heldPort} (frontend.http) is in use by pid ${process.pid} (`);
    expect(ports.fix).toContain(`--set frontend.httpPort=${heldPort + 1}`);
  });

  it('names the GPU memory a leftover engine holds when nvidia-smi lists it', async () => {
    const engine = spawn('sleep', ['300'], { argv0: 'VLLM::EngineCore', stdio: 'ignore' });
    children.push(engine);
    await once(engine, 'spawn');
    const apps = join(home.dir, 'compute-apps.csv');
    writeFileSync(apps, `${engine.pid}, VLLM::EngineCore, 3010\n2165, /usr/bin/kwin_wayland, 25\n`);
    const env = fakeEnv(home, { gpu: 'laptop-570', vars: { FAKE_NVIDIA_SMI_APPS: apps } });
    const r = await runCli(['doctor', '--only', 'procs.leftover', '--recipe', recipePath, '--json'], env);
    const procs = (JSON.parse(r.stdout) as { checks: CheckJson[] }).checks[0];
    expect(procs.status).toBe('fail');
    const line = procs.details.find((d) => d.startsWith(`pid ${engine.pid}  `));
    expect(line).toMatch(/age \d+s/);
    expect(line).toContain('GPU 3010 MiB');
  });

  it('lets them pass once the engine is gone, the lock released and UCX_TLS sane', async () => {
    cacheModel(); // lock file left behind, nobody holding it
    const { checks } = await doctor({ UCX_TLS: '^cuda_ipc' });
    // Other tests on this machine may run engine-like processes; none of ours is left.
    const listed = (checks['procs.leftover'].evidence.processes as { pid: number }[]);
    expect(listed.every((p) => !children.some((c) => c.pid === p.pid))).toBe(true);
    expect(checks['hf.locks'].status).toBe('pass');
    expect(checks['hf.locks'].details.join('\n')).toContain('no process holds it');
    expect(checks['ucx.transports'].status).toBe('pass');
    const unset = await doctor();
    expect(unset.checks['ucx.transports'].status).toBe('pass');
  });

  it('passes free ports, warns when the model is not cached, skips ucx with no ucx_info and no UCX_TLS', async () => {
    const empty = tempHome('dd-e2e-host-empty-');
    try {
      const freeRecipe = join(empty.dir, 'free.yaml');
      const [http, system] = [await freePort(), await freeSystemPort()];
      writeFileSync(freeRecipe, `name: free-ports\nfrontend:\n  httpPort: ${http}\nworkers:\n  - role: agg\n    gpuMemoryUtilization: 0.38\nports:\n  system: ${system}\n`);
      const env = fakeEnv(empty, {});
      const r = await runCli(['doctor', '--only', 'hf.locks,ucx.transports,ports.free', '--recipe', freeRecipe, '--json'], env);
      const doc = JSON.parse(r.stdout) as { checks: CheckJson[] };
      const [hf, ucx, ports] = doc.checks;
      expect(hf.status).toBe('warn');
      expect(hf.fix).toContain('hf download Qwen/Qwen3-0.6B');
      expect(ucx.status).toBe('skip');
      expect(ports.status).toBe('pass');
      expect(r.code).toBe(0);
    } finally {
      empty.cleanup();
    }
  });

  it('a hung ucx_info does not hang doctor: killed at --timeout, the static reading warns naming it, one JSON document', async () => {
    // The check's own deadline is the NIXL probe's (minTimeoutMs); ucx_info keeps --timeout.
    const env = fakeEnv(home, { ucx: 'hang' });
    const r = await runCli(['doctor', '--only', 'ucx.transports', '--recipe', 'disagg-same-gpu', '--timeout', '400', '--json'], env);
    expect(r.code).toBe(0);
    expect(r.durationMs).toBeLessThan(4000);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const [ucx] = (JSON.parse(r.stdout) as { checks: CheckJson[] }).checks;
    expect(ucx.status).toBe('warn');
    expect(ucx.summary).toBe('static (NIXL not importable): ucx_info failed: ucx_info -d timed out after 400 ms; UCX may be broken, and disaggregated KV transfer needs it');
  });
});
