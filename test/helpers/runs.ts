import { closeSync, constants, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { parseProcNetTcp } from '../../src/host/procs/parse-proc.js';
import { join } from 'node:path';
import { groupMembers, isSameProcess, readCmdline, readStat } from '../../src/run/proc.js';
import { environVerdict, readEnviron } from '../../src/run/run-marker-proof.js';
import { markerFor, markerIn } from '../../src/run/run-scan.js';
import type { RunRecord } from '../../src/run/types.js';

// What e2e tests of `up` read back from a state dir, and the port check their setups share.

/** True when nothing listens on the port (we can bind it ourselves). */
export function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '0.0.0.0', () => srv.close(() => resolve(true)));
  });
}

export function records(stateDir: string): RunRecord[] {
  let ids: string[] = [];
  try {
    ids = readdirSync(join(stateDir, 'runs'));
  } catch {
    return [];
  }
  return ids.flatMap((id) => {
    const text = readRegular(join(stateDir, 'runs', id, 'run.json'));
    try {
      return text === null ? [] : [JSON.parse(text) as RunRecord];
    } catch {
      return [];
    }
  });
}

/** A regular file's text, else null: tests plant run.json as a named pipe, whose plain open blocks until a writer comes. */
function readRegular(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd, 'utf8') : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Every process a run recorded (group members and engine descendants; the supervisor with
 * `supervisor`) still alive. A group member counts when it is the recorded leader (same start
 * ticks) or carries the run's marker (or an environment setproctitle wiped): once the leader is
 * gone its pgid is free, and under a full suite's pid churn another test's detached process can
 * be given that pid and lead a group of the same number (stop 36's CI: "frontend group member").
 * Each is named with its command line, so a failure says what it was.
 */
export function survivors(stateDir: string, o: { supervisor?: boolean } = {}): string[] {
  const out: string[] = [];
  for (const rec of records(stateDir)) {
    const marker = markerFor(stateDir, rec.id);
    const theRuns = (p: RunRecord['processes'][number], m: number) =>
      (m === p.pid && isSameProcess(m, p.startTicks)) || environVerdict(readEnviron(m), marker) !== 'unmarked';
    for (const p of rec.processes) {
      if (p.pgid !== null) for (const m of groupMembers(p.pgid)) if (theRuns(p, m)) out.push(`${p.name} group member ${m} ${readCmdline(m)}`);
      for (const d of p.descendants) if (isSameProcess(d.pid, d.startTicks)) out.push(`${p.name} descendant ${d.pid} ${d.cmd}`);
    }
    if (o.supervisor && isSameProcess(rec.supervisor.pid, rec.supervisor.startTicks)) out.push(`supervisor ${rec.supervisor.pid}`);
  }
  return out;
}

/**
 * Live members of a process group whose environment holds `entry` (NAME=value) or was wiped
 * (setproctitle): a test's own processes, never a stranger given the group's number once its
 * leader died (a full suite recycles pids within seconds). For scripts, whose processes carry no
 * run marker; a test that SIGKILLs a group after it signals only these.
 */
export function groupMembersWith(pgid: number, entry: string): number[] {
  return groupMembers(pgid).filter((m) => {
    const env = readEnviron(m);
    return env !== null && (env.split('\0').includes(entry) || ['wiped', 'empty'].includes(environVerdict(env, '')));
  });
}

/** Live pids whose environment carries exactly this run marker (as root, every process's environment is readable). */
export function markedPids(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let env: string;
    try {
      env = readFileSync(`/proc/${name}/environ`, 'latin1');
    } catch {
      continue;
    }
    if (markerIn(env) === marker && readStat(Number(name)) !== null) out.push(Number(name));
  }
  return out.sort((a, b) => a - b);
}

/** The highest port of a block: DYN_SYSTEM_PORT is a signed 16-bit number, and above it lies the ephemeral range. */
export const BLOCK_LIMIT = 32767;

/**
 * The base of a free block of 20 ports for one `up` (http base, system base+1.., kv events base+10..,
 * NIXL base+15..), drawn at random from `blocks` blocks above `lowest` (those that end at or below
 * BLOCK_LIMIT: a system port past 32767 is refused by the plan), each port checked.
 */
export async function portBlock(lowest: number, blocks: number): Promise<number> {
  const fitting = fittingBlocks(lowest, blocks);
  for (let attempt = 0; attempt < 50; attempt++) {
    const b = lowest + 20 * Math.floor(Math.random() * fitting);
    if ((await Promise.all([b, b + 1, b + 2, b + 3, b + 10, b + 11, b + 15, b + 16].map(bindable))).every(Boolean)) return b;
  }
  throw new Error(`no free port block above ${lowest}`);
}

/** How many of the `blocks` blocks of 20 ports from `lowest` end at or below BLOCK_LIMIT (at least one, or it throws). */
export function fittingBlocks(lowest: number, blocks: number): number {
  const fitting = Math.min(blocks, Math.floor((BLOCK_LIMIT - 19 - lowest) / 20) + 1);
  if (fitting < 1) throw new Error(`portBlock: no block of 20 ports from ${lowest} ends at or below ${BLOCK_LIMIT}`);
  return fitting;
}

/** Qwen3-0.6B as the HF cache holds it: config.json and 1,200,000,000 bytes of weights (sparse). */
export function cacheQwen3(hfCache: string): void {
  const root = join(hfCache, 'models--Qwen--Qwen3-0.6B');
  const snap = join(root, 'snapshots', 'c1899de');
  mkdirSync(join(root, 'refs'), { recursive: true });
  mkdirSync(snap, { recursive: true });
  writeFileSync(join(root, 'refs', 'main'), 'c1899de');
  writeFileSync(join(snap, 'config.json'), JSON.stringify({
    architectures: ['Qwen3ForCausalLM'], head_dim: 128, hidden_size: 1024, num_attention_heads: 16, num_hidden_layers: 28,
    num_key_value_heads: 8, torch_dtype: 'bfloat16', max_position_embeddings: 40960,
  }));
  writeFileSync(join(snap, 'tokenizer.json'), '{}');
  writeFileSync(join(snap, 'model.safetensors'), '');
  truncateSync(join(snap, 'model.safetensors'), 1_200_000_000);
}

/** The pids whose open files include a socket listening on the port (/proc/net/tcp{,6} inodes -> /proc/PID/fd). */
export function listenerPids(port: number): number[] {
  const inodes = new Set<string>();
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const l of parseProcNetTcp(text)) if (l.port === port) inodes.add(l.inode);
  }
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${name}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link = '';
      try {
        link = readlinkSync(`/proc/${name}/fd/${fd}`);
      } catch {
        continue;
      }
      if (link.startsWith('socket:[') && inodes.has(link.slice(8, -1))) {
        out.push(Number(name));
        break;
      }
    }
  }
  return out;
}
