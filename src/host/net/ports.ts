import { readdirSync, readlinkSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { classifyEngineCmd } from '../procs/engine-procs.js';
import { cmdOf, eachPid, SCAN_SLICE_MS } from '../procs/proc-files.js';
import { parseProcNetTcp, type TcpListener } from '../procs/parse-proc.js';
import type { PortFact, ProcessInfo } from '../types.js';

// Whether the plan's ports are free, and who holds the ones that are not.

type Bind = 'free' | 'in-use' | 'denied';

/** Tries to listen on host:port and closes at once. EADDRINUSE -> in-use; EACCES (< 1024) -> denied. */
function tryListen(port: number, host: string): Promise<Bind> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EADDRNOTAVAIL' || e.code === 'EAFNOSUPPORT') resolve('free'); // no such interface here
      else resolve(e.code === 'EACCES' ? 'denied' : 'in-use');
    });
    srv.listen({ port, host }, () => srv.close(() => resolve('free')));
  });
}

/**
 * Binding 0.0.0.0 fails when anything listens on the port on any IPv4 address; 127.0.0.1 is tried
 * too, the address the supervisor's readiness probes use, in case a listener slipped through
 * with SO_REUSEPORT.
 */
async function bindState(port: number): Promise<Bind> {
  const any = await tryListen(port, '0.0.0.0');
  if (any !== 'free') return any;
  return tryListen(port, '127.0.0.1');
}

/** Every listening TCP socket of this network namespace (/proc/net/tcp and tcp6). */
export async function readListeners(): Promise<TcpListener[]> {
  const texts = await Promise.all(['/proc/net/tcp', '/proc/net/tcp6'].map((p) => readFile(p, 'utf8').catch(() => '')));
  return texts.flatMap(parseProcNetTcp);
}

/** Interpreters and servers that commonly hold a port (a leftover frontend, a dev server, a notebook). */
const SERVERISH = /^(?:\S*\/)?(?:python[\d.]*|node|nodejs|deno|bun|java|ruby|php[\d.]*|uvicorn|gunicorn|hypercorn|jupyter\S*|docker-proxy|nginx|caddy|envoy|etcd|nats-server|redis-server)(?:\s|$)/;

/**
 * Pure: the processes worth looking at for the holder of a socket, most likely first: engines (a
 * leftover Dynamo or vLLM process is the usual holder), then interpreters and servers, then the
 * rest, newest first within each. Looking stops at the holder, so a machine full of idle
 * processes (browsers' helpers, shells, containers) costs little unless the holder is one of them.
 */
export function holderCandidates(procs: readonly ProcessInfo[]): ProcessInfo[] {
  const ranks: ProcessInfo[][] = [[], [], []];
  for (const p of procs) {
    const cmd = p.cmd;
    ranks[classifyEngineCmd(cmd) ? 0 : SERVERISH.test(cmd) ? 1 : 2].push(p);
  }
  return ranks.flatMap((r) => r.sort((a, b) => b.pid - a.pid));
}

/** The socket inodes a process holds open (`socket:[N]` links in /proc/PID/fd); null when it is gone or not ours to read. */
function socketInodes(pid: number): string[] | null {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return null;
  }
  const out: string[] = [];
  for (const fd of fds) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (link.startsWith('socket:[')) out.push(link.slice(8, -1));
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

/** Adds to `found` the holders of the wanted socket inodes among the candidates `take` accepts; stops once all are found. */
async function lookForHolders(inodes: ReadonlySet<string>, candidates: readonly ProcessInfo[], take: (p: ProcessInfo) => boolean, found: Map<string, number>): Promise<void> {
  const byPid = new Map(candidates.map((p) => [p.pid, p]));
  await eachPid(candidates.map((p) => p.pid), (pid) => {
    if (!take(byPid.get(pid)!)) return null;
    const held = socketInodes(pid);
    if (held === null) return null; // gone, or not ours to read
    for (const inode of held) {
      if (inodes.has(inode) && !found.has(inode)) found.set(inode, pid);
    }
    return null;
  }, SCAN_SLICE_MS, () => found.size === inodes.size);
}

/**
 * Pids whose open fds include `socket:[inode]`, for the wanted inodes: the fds of the candidates
 * in order, first those of the sockets' users (a socket's uid is its creator's), then, for a
 * holder not found yet (a server that dropped root after binding), the others; stopping once every
 * inode has its holder. Other users' /proc/PID/fd is unreadable without root: those holders stay
 * unknown.
 */
export async function socketOwners(inodes: Set<string>, candidates: readonly ProcessInfo[], uids: ReadonlySet<number> | null = null): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  if (inodes.size === 0) return found;
  const owners = (p: ProcessInfo) => uids === null || (p.uid !== null && uids.has(p.uid));
  await lookForHolders(inodes, candidates, owners, found);
  if (found.size < inodes.size && uids !== null) await lookForHolders(inodes, candidates, (p) => !owners(p), found);
  return found;
}

/**
 * Probes every port concurrently (each distinct port once) and names the holders of taken ones.
 * `processes`: the process list to find holders in (doctor shares its own); listed here otherwise.
 */
export async function probePorts(
  ports: { name: string; port: number; process: string }[],
  o: { processes?: () => Promise<ProcessInfo[]> } = {},
): Promise<PortFact[]> {
  // Listeners first: our own probe sockets must not show up in them.
  const listeners = await readListeners();
  const distinct = [...new Set(ports.map((p) => p.port))];
  const states = new Map(await Promise.all(distinct.map(async (port) => [port, await bindState(port)] as const)));

  const taken = (port: number) => states.get(port) !== 'free' || listeners.some((l) => l.port === port);
  const held = listeners.filter((l) => taken(l.port) && distinct.includes(l.port));
  const wanted = new Set(held.map((l) => l.inode));
  let owners = new Map<string, number>();
  if (wanted.size > 0) {
    const procs = await (o.processes ?? (async () => (await import('../procs/processes.js')).listProcesses()))();
    const uids = held.every((l) => Number.isInteger(l.uid)) ? new Set(held.map((l) => l.uid)) : null;
    owners = await socketOwners(wanted, holderCandidates(procs), uids);
  }
  const holderOf = async (port: number): Promise<{ pid: number | null; cmd: string | null }> => {
    for (const l of listeners.filter((x) => x.port === port)) {
      const pid = owners.get(l.inode);
      if (pid !== undefined) return { pid, cmd: await cmdOf(pid) };
    }
    return { pid: null, cmd: null };
  };

  return Promise.all(ports.map(async (p): Promise<PortFact> => {
    if (!taken(p.port)) return { name: p.name, port: p.port, free: true, holderPid: null, holderCmd: null };
    // Nobody listens there, we just may not bind it: "in use" would send the user hunting a ghost.
    if (states.get(p.port) === 'denied' && !listeners.some((l) => l.port === p.port)) {
      return { name: p.name, port: p.port, free: false, denied: true, holderPid: null, holderCmd: null };
    }
    const h = await holderOf(p.port);
    return { name: p.name, port: p.port, free: false, holderPid: h.pid, holderCmd: h.cmd };
  }));
}

/** Whether nothing is bound to the port (up --name picks its ports past the busy ones). */
export async function portFree(port: number): Promise<boolean> {
  return (await bindState(port)) === 'free';
}

/**
 * Who listens on the port, told against the pids of one run: 'ours' when one of them holds a
 * socket listening on it, 'other' when only processes outside them do, 'none' when nothing in
 * this network namespace listens there (an answer from elsewhere: nothing to judge by).
 * A run's readiness is judged on its own processes: another run's frontend on the same port
 * answers every probe just as well (issue 29).
 */
export async function portListenedBy(port: number, pids: readonly number[]): Promise<'ours' | 'other' | 'none'> {
  const inodes = new Set((await readListeners()).filter((l) => l.port === port).map((l) => l.inode));
  if (inodes.size === 0) return 'none';
  for (const pid of pids) {
    // A pid gone meanwhile holds nothing.
    if ((socketInodes(pid) ?? []).some((inode) => inodes.has(inode))) return 'ours';
  }
  return 'other';
}
