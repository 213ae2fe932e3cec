import { beforeEach, describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from '../../helpers/cli.js';
import type { ProcStat } from '../../../src/run/proc.js';

// How a run's descendants are found through /proc/PID/task/TID/children, on a /proc held in memory
// whose files have the real shapes (stat lines from test/fixtures/proc, children lists ending in a
// space): kernels without those files (CONFIG_PROC_CHILDREN off) and the races of a read that
// takes time (a child moving between threads, a pid reused during the walk).

interface FakeProc { stat: ProcStat; cmd: string; tasks: Record<number, number[]> }
const kernel = vi.hoisted(() => ({ procs: new Map<number, FakeProc>(), childrenFiles: true }));

/** A /proc/PID/stat line in the kernel's format (the captured `cat` line with its fields replaced). */
const statLine = (s: ProcStat) => readFileSync(join(FIXTURES, 'proc', 'stat.running.txt'), 'utf8')
  .replace(/^6126 \(cat\) R 6113 6113 4091 /, `${s.pid} (${s.comm}) ${s.state} ${s.ppid} ${s.pgid} ${s.session} `)
  .replace(' 44844 ', ` ${s.startTicks} `);

vi.mock('../../../src/host/procs/proc-files.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/host/procs/proc-files.js')>();
  const { parseProcStat } = await import('../../../src/host/procs/parse-proc.js');
  const readSmallSync = (path: string): string | null => {
    const m = /^\/proc\/(\d+)\/(stat|cmdline|task\/(\d+)\/children)$/.exec(path);
    if (!m) return null;
    if (m[3] !== undefined && !kernel.childrenFiles) return null;
    if (Number(m[1]) === process.pid && m[3] !== undefined) return ''; // the probe for children files
    const p = kernel.procs.get(Number(m[1]));
    if (!p) return null;
    if (m[2] === 'stat') return statLine(p.stat);
    if (m[2] === 'cmdline') return `${p.cmd.split(' ').join('\0')}\0`;
    const kids = p.tasks[Number(m[3])];
    return kids === undefined ? null : kids.map((k) => `${k} `).join('');
  };
  return {
    ...real,
    readSmallSync,
    readStatSync: (pid: number) => {
      const t = readSmallSync(`/proc/${pid}/stat`);
      return t === null ? null : parseProcStat(t);
    },
    listPids: () => [...kernel.procs.keys()].sort((a, b) => a - b),
  };
});
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return {
    ...real,
    readdirSync: ((path: string, ...rest: unknown[]) => {
      const m = /^\/proc\/(\d+)\/task$/.exec(String(path));
      if (!m) return (real.readdirSync as (...a: unknown[]) => unknown)(path, ...rest);
      const p = kernel.procs.get(Number(m[1]));
      if (!p) throw Object.assign(new Error(`ENOENT: no such file or directory, scandir '${path}'`), { code: 'ENOENT' });
      return Object.keys(p.tasks);
    }) as typeof real.readdirSync,
  };
});

function add(pid: number, ppid: number, pgid: number, cmd: string, tasks: Record<number, number[]> = { [pid]: [] }): void {
  kernel.procs.set(pid, { stat: { pid, comm: cmd.split(' ')[0].slice(0, 15), state: 'S', ppid, pgid, session: 7, startTicks: 1000 + pid }, cmd, tasks });
}

/** A fresh proc.ts: it remembers per process whether the kernel has children files. */
const load = async () => {
  vi.resetModules();
  return import('../../../src/run/proc.js');
};

beforeEach(() => {
  kernel.procs.clear();
  kernel.childrenFiles = true;
  // A worker (100) whose child (200) runs an engine (300); an unrelated process (900).
  add(1, 0, 1, 'init');
  add(100, 1, 100, 'python3 -m dynamo.vllm', { 100: [200] });
  add(200, 100, 100, 'bash pyenv-exec', { 200: [300] });
  add(300, 200, 100, 'VLLM::EngineCore');
  add(900, 1, 900, 'unrelated');
});

describe('a kernel without children files', () => {
  it('descendants are still found (from a full scan), with their command lines; childrenOf and scanAround say they cannot tell', async () => {
    kernel.childrenFiles = false;
    const proc = await load();
    expect(proc.childrenOf(100)).toBeNull();
    expect(proc.scanAround([100])).toBeNull();
    expect(proc.descendantStats(100).map((s) => s.pid)).toEqual([200, 300]);
    expect(proc.descendants(100)).toEqual([
      { pid: 200, startTicks: 1200, cmd: 'bash pyenv-exec' },
      { pid: 300, startTicks: 1300, cmd: 'VLLM::EngineCore' },
    ]);
  });
});

describe('a kernel with children files', () => {
  it('the walk finds children and grandchildren, each once, and nothing else', async () => {
    const proc = await load();
    expect(proc.childrenOf(100)).toEqual([200]);
    expect(proc.descendantStats(100).map((s) => s.pid)).toEqual([200, 300]);
    expect(proc.scanAround([100])!.map((s) => s.pid)).toEqual([100, 200, 300]);
    expect(proc.childrenOf(4242)).toEqual([]);
  });

  it('a children list of several pids (each followed by a space, as the kernel writes it) reads as exactly those pids', async () => {
    kernel.procs.get(100)!.tasks = { 100: [200, 250] };
    add(250, 100, 100, 'VLLM::Worker_TP0');
    const proc = await load();
    expect(proc.childrenOf(100)).toEqual([200, 250]);
  });

  it('a child listed under two threads (it moved while the threads were read) is one descendant', async () => {
    kernel.procs.get(100)!.tasks = { 100: [200], 101: [200] };
    const proc = await load();
    expect(proc.descendants(100).map((d) => d.pid)).toEqual([200, 300]);
  });

  it('a pid reused during the walk that points back at the root: the root is never its own descendant', async () => {
    // The engine's children file lists 100: read at a moment 100 was another process's pid.
    kernel.procs.get(300)!.tasks = { 300: [100] };
    const proc = await load();
    expect(proc.descendantStats(100).map((s) => s.pid)).toEqual([200, 300]);
  });
});

describe('descendants in a scan read over time', () => {
  const st = (pid: number, ppid: number): ProcStat => ({ pid, comm: 'x', state: 'S', ppid, pgid: 100, session: 7, startTicks: pid });

  it('a process read twice in one scan is listed once', async () => {
    const { descendantsIn } = await load();
    expect(descendantsIn([st(100, 1), st(200, 100), st(200, 100)], 100).map((s) => s.pid)).toEqual([200]);
  });

  it('a parent loop (pids reused while the scan was read) ends, and the root is not listed', async () => {
    const { descendantsIn } = await load();
    expect(descendantsIn([st(100, 300), st(200, 100), st(300, 200)], 100).map((s) => s.pid)).toEqual([200, 300]);
  });
});
