import { readdir, readFile, readlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { cmdOf } from './proc-files.js';
import { parseProcNetTcp, type TcpListener } from './parse-proc.js';
import type { PortFact } from './types.js';

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

async function readListeners(): Promise<TcpListener[]> {
  const texts = await Promise.all(['/proc/net/tcp', '/proc/net/tcp6'].map((p) => readFile(p, 'utf8').catch(() => '')));
  return texts.flatMap(parseProcNetTcp);
}

/**
 * Pids whose open fds include `socket:[inode]`, for the wanted inodes. Other users' /proc/PID/fd
 * is unreadable without root: those holders stay unknown.
 */
export async function socketOwners(inodes: Set<string>): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  if (inodes.size === 0) return found;
  let pids: string[];
  try {
    pids = (await readdir('/proc')).filter((d) => /^\d+$/.test(d));
  } catch {
    return found;
  }
  await Promise.all(pids.map(async (pid) => {
    let fds: string[];
    try {
      fds = await readdir(`/proc/${pid}/fd`);
    } catch {
      return; // gone, or not ours to read
    }
    for (const fd of fds) {
      if (found.size === inodes.size) return;
      const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m && inodes.has(m[1]) && !found.has(m[1])) found.set(m[1], Number(pid));
    }
  }));
  return found;
}

/** Probes every port concurrently (each distinct port once) and names the holders of taken ones. */
export async function probePorts(ports: { name: string; port: number; process: string }[]): Promise<PortFact[]> {
  // Listeners first: our own probe sockets must not show up in them.
  const listeners = await readListeners();
  const distinct = [...new Set(ports.map((p) => p.port))];
  const states = new Map(await Promise.all(distinct.map(async (port) => [port, await bindState(port)] as const)));

  const taken = (port: number) => states.get(port) !== 'free' || listeners.some((l) => l.port === port);
  const wanted = new Set(listeners.filter((l) => taken(l.port) && distinct.includes(l.port)).map((l) => l.inode));
  const owners = await socketOwners(wanted);
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
