import { spawn, type ChildProcess, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { holderCandidates, probePorts } from '../../../src/host/net/ports.js';
import { freePort } from '../../helpers/ports.js';
import { killChildren } from '../../helpers/children.js';

const PYTHON = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
const servers: Server[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  await killChildren(children);
});

async function listen(host: string, port = 0): Promise<number> {
  const s = createServer();
  servers.push(s);
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.listen({ port, host }, () => resolve());
  });
  return (s.address() as { port: number }).port;
}


describe('probePorts on real sockets', () => {
  it('says a free port is free', async () => {
    const port = await freePort();
    expect(await probePorts([{ name: 'frontend.http', port, process: 'frontend' }])).toEqual([
      { name: 'frontend.http', port, free: true, holderPid: null, holderCmd: null },
    ]);
  });

  it('finds a 0.0.0.0 listener held by this very process, with our pid and command', async () => {
    const port = await listen('0.0.0.0');
    const [f] = await probePorts([{ name: 'frontend.http', port, process: 'frontend' }]);
    expect(f.free).toBe(false);
    expect(f.holderPid).toBe(process.pid);
    expect(f.holderCmd).toContain('node');
  });

  it('finds a 127.0.0.1-only listener of another process', async () => {
    const code = 'import socket, sys\ns = socket.socket()\ns.bind(("127.0.0.1", 0))\ns.listen()\nprint(s.getsockname()[1], flush=True)\nsys.stdin.read()\n';
    const child = spawn(PYTHON, ['-c', code], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(child);
    const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
    const port = Number(line);
    const [f] = await probePorts([{ name: 'agg-0.system', port, process: 'agg-0' }]);
    expect(f).toMatchObject({ name: 'agg-0.system', port, free: false, holderPid: child.pid });
    expect(f.holderCmd).toMatch(/python\S* -c import socket/);
  });

  it('finds an IPv6 loopback-only listener', async () => {
    const port = await listen('::1');
    const [f] = await probePorts([{ name: 'agg-0.kvEvents', port, process: 'agg-0' }]);
    expect(f).toMatchObject({ free: false, holderPid: process.pid });
  });

  it('probes all ports at once and keeps the plan\'s order and names', async () => {
    const taken = await listen('0.0.0.0');
    const free = await freePort();
    const out = await probePorts([
      { name: 'frontend.http', port: free, process: 'frontend' },
      { name: 'agg-0.system', port: taken, process: 'agg-0' },
    ]);
    expect(out.map((p) => [p.name, p.free])).toEqual([['frontend.http', true], ['agg-0.system', false]]);
  });
});

describe('finding holders without reading every fd of every process', () => {
  const proc = (pid: number, cmd: string) => ({ pid, ppid: 1, uid: 0, user: 'root', cmd, name: '', startTicks: 1, ageMs: 0, pgid: pid });

  it('holderCandidates: engines first, then interpreters and servers, then the rest, newest first in each', () => {
    const procs = [
      proc(10, 'sleep 3600'), proc(20, '/usr/bin/python3 -m http.server 8000'), proc(30, 'python3 -m dynamo.frontend --http-port 8000'),
      proc(40, 'bash'), proc(50, 'node server.js'), proc(5, 'VLLM::EngineCore'),
    ];
    expect(holderCandidates(procs).map((p) => p.pid)).toEqual([30, 5, 50, 20, 40, 10]);
  });

  it('stops at the holder: processes ranked after it are never looked at', async () => {
    const port = await listen('0.0.0.0');
    // A candidate after us whose fds cannot be listed would only be reached if the search went on.
    const me = { ...proc(process.pid, 'node'), uid: process.getuid!() };
    const after = { ...proc(2 ** 22 + 7, 'sleep'), get uid(): number { throw new Error('looked at a candidate after the holder'); } };
    const [f] = await probePorts([{ name: 'frontend.http', port, process: 'frontend' }], { processes: async () => [me, after] });
    expect(f).toMatchObject({ free: false, holderPid: process.pid });
  });

  it('a holder of another user than its socket (a server that dropped root after binding) is still found', async () => {
    const port = await listen('0.0.0.0');
    const me = { ...proc(process.pid, 'node'), uid: process.getuid!() + 4242 };
    const [f] = await probePorts([{ name: 'frontend.http', port, process: 'frontend' }], { processes: async () => [me] });
    expect(f).toMatchObject({ free: false, holderPid: process.pid });
  });
});
