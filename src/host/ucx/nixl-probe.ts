import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listPids, readStatSync } from '../procs/proc-files.js';
import { complaints, dataLane, parseProtoTables, probeReport, ucxVersionLine, type DataLane, type NixlProbeReport, type ProbeComplaints } from './parse-nixl-probe.js';

// Runs nixl-probe.py (shipped beside this file: the build copies it into dist/host/ucx/) in the
// run's interpreter with the environment the workers will get: two NIXL agents with the UCX
// backend move a few MB both ways and verify them. It runs in its own process group, which is
// killed at the deadline and searched for survivors after it ends, so no probe process outlives
// the call. Its buffers are its own (DRAM, or VRAM it allocates): it touches no memory of a run.
// Never throws: a missing interpreter, a timeout, a crash are facts.

type Env = Readonly<Record<string, string | undefined>>;

export const NIXL_PROBE_SCRIPT = fileURLToPath(new URL('./nixl-probe.py', import.meta.url));

/** 4 MiB each way: one layer's KV of a small model for a few hundred tokens, and quick on any lane. */
export const NIXL_PROBE_BYTES = 4 << 20;
/** Output kept per stream; UCX_PROTO_INFO=y prints ~300 lines per run. */
const MAX_OUTPUT = 2 << 20;

export interface NixlProbeOptions {
  python: string;
  /** The workers' environment (the user's plus the plan's), UCX_* included. */
  env: Env;
  /** VRAM on this device when the machine has a GPU (CUDA_VISIBLE_DEVICES applies); DRAM otherwise. */
  mem: 'dram' | 'auto';
  /** Why DRAM was chosen (no GPU, a live run holds it), said in the verdict's details. */
  dramWhy?: string | null;
  device?: number;
  timeoutMs: number;
  bytes?: number;
  rounds?: number;
}

export interface NixlProbeFacts {
  python: string;
  /** Why the probe gave no report: the interpreter did not start, it was killed at the deadline, it crashed. */
  runError: string | null;
  timedOut: boolean;
  timeoutMs: number;
  /** NIXL's UCX API is not importable in this interpreter: the import's error (the check is static then). */
  notImportable: string | null;
  report: NixlProbeReport | null;
  /** The lane UCX used for the writes to the other process (UCX_PROTO_INFO); null if no transfer ran. */
  lane: DataLane | null;
  complaints: ProbeComplaints;
  bytes: number;
  /** UCX_* as the workers get them (the probe ran with exactly these, plus UCX_PROTO_INFO=y). */
  ucxEnv: Record<string, string>;
  /** The probe's process group (its leader's pid); null when it did not start. */
  pgid: number | null;
  /** Probe processes still alive when it ended, killed then (none expected: the script waits for its peer). */
  killedLeftovers: number[];
  elapsedMs: number;
  /** Why the buffers are DRAM by our choice (no GPU, a live run on it); null when VRAM was asked. */
  dramWhy?: string | null;
  /** The raw output, for fixtures and --json; capped. */
  output: string;
}

/** UCX_* of an environment, sorted. */
export function ucxVars(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(env).filter((k) => k.startsWith('UCX_')).sort()) {
    const v = env[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** Live pids whose process group is pgid (the probe's own group: its leader was spawned detached); zombies are dead already. */
export function groupMembers(pgid: number): number[] {
  return listPids().filter((pid) => {
    const st = readStatSync(pid);
    return st !== null && st.pgid === pgid && st.state !== 'Z' && st.state !== 'X';
  });
}

/** SIGKILL is asynchronous: until the group is gone (no event tells), looked at every 20 ms for at most a second. */
async function untilGone(pgid: number): Promise<void> {
  for (let i = 0; i < 50 && groupMembers(pgid).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
}

/** The pure part: what the probe's output and exit say. */
export function readNixlProbe(o: {
  python: string; stdout: string; stderr: string; exit: number | null; signal: string | null; startError: string | null;
  timedOut: boolean; timeoutMs: number; bytes: number; env: Env; killedLeftovers: number[]; elapsedMs: number; pgid?: number | null;
}): NixlProbeFacts {
  const text = `${o.stdout}\n${o.stderr}`;
  const parsed = probeReport(o.stdout);
  // The script reads the version from the libucp it mapped; UCX's INFO line says it too.
  const line = ucxVersionLine(text);
  const report = parsed && line && !parsed.ucxVersion ? { ...parsed, ucxVersion: line.version, ucpPath: parsed.ucpPath ?? (line.path ? posix.normalize(line.path) : null) } : parsed;
  const stage = report?.stage ?? null;
  const notImportable = stage === 'import' && report?.error ? report.error : null;
  let runError: string | null = null;
  if (o.startError) runError = o.startError;
  else if (o.timedOut) runError = `the NIXL probe did not finish in ${(o.timeoutMs / 1000).toFixed(0)} s and was killed`;
  else if (!report) {
    const last = o.stderr.trim().split('\n').filter((l) => l.trim()).pop();
    runError = `the NIXL probe ended (${o.signal ? `killed by ${o.signal}` : `exit ${o.exit}`}) without a result${last ? `: ${last.trim()}` : ''}`;
  }
  return {
    python: o.python,
    runError,
    timedOut: o.timedOut,
    timeoutMs: o.timeoutMs,
    notImportable,
    report,
    lane: report && stage === 'done' ? dataLane(parseProtoTables(text), o.bytes, report.pid ?? null) : null,
    complaints: complaints(text),
    bytes: o.bytes,
    ucxEnv: ucxVars(o.env),
    pgid: o.pgid ?? null,
    killedLeftovers: o.killedLeftovers,
    elapsedMs: o.elapsedMs,
    output: text.length > MAX_OUTPUT ? text.slice(-MAX_OUTPUT) : text,
  };
}

export function probeNixl(o: NixlProbeOptions): Promise<NixlProbeFacts> {
  const bytes = o.bytes ?? NIXL_PROBE_BYTES;
  // The script's own deadline comes first, so a slow step is reported by it with its stage;
  // ours kills the whole group a moment later whatever it is doing.
  const seconds = Math.max(1, (o.timeoutMs - 1000) / 1000);
  const args = [NIXL_PROBE_SCRIPT, '--bytes', String(bytes), '--rounds', String(o.rounds ?? 3), '--mem', o.mem,
    '--device', String(o.device ?? 0), '--seconds', seconds.toFixed(1)];
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.env)) if (v !== undefined) env[k] = v;
  // Which lane carries the data: UCX prints its protocol tables (ucp_context.c PROTO_INFO).
  env.UCX_PROTO_INFO = 'y';
  // ...and at info level which library it is ("Version 1.22.0 (loaded from ...)") and the UCX_* it read.
  env.UCX_LOG_LEVEL = 'info';
  env.PYTHONUNBUFFERED = '1';
  const t0 = performance.now();
  return new Promise((resolve) => {
    const done = (r: { stdout: string; stderr: string; exit: number | null; signal: string | null; startError: string | null; timedOut: boolean; killed: number[]; pgid?: number }) =>
      resolve({ ...readNixlProbe({ python: o.python, ...r, timeoutMs: o.timeoutMs, bytes, env: o.env, killedLeftovers: r.killed, elapsedMs: Math.round(performance.now() - t0) }), dramWhy: o.dramWhy ?? null });
    if (!existsSync(NIXL_PROBE_SCRIPT)) {
      done({ stdout: '', stderr: '', exit: null, signal: null, startError: `the probe script is missing: ${NIXL_PROBE_SCRIPT}`, timedOut: false, killed: [] });
      return;
    }
    const child = spawn(o.python, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outLen = 0;
    let errLen = 0;
    child.stdout.on('data', (d: Buffer) => {
      if ((outLen += d.length) <= MAX_OUTPUT * 2) out.push(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      if ((errLen += d.length) <= MAX_OUTPUT) err.push(d);
    });
    let timedOut = false;
    let startError: string | null = null;
    const pgid = child.pid;
    const killGroup = () => {
      if (pgid === undefined) return;
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // ESRCH: the group is empty already.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(); // the leader is not reaped yet: the group is still ours
    }, o.timeoutMs);
    const onExit = () => process.off('exit', killGroup);
    process.once('exit', killGroup);
    let settled = false;
    child.on('error', (e: NodeJS.ErrnoException) => {
      startError = e.code === 'ENOENT' ? `${o.python} not found` : `${o.python}: ${e.code ?? e.message}`;
    });
    child.on('close', (code, signal) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      onExit();
      // The script waits for its peer before it exits; anything of its group still here is a
      // stray (a peer stuck in a driver call): killed now, and said.
      const strays = pgid === undefined ? [] : groupMembers(pgid);
      if (strays.length > 0) killGroup();
      void (strays.length > 0 || timedOut ? untilGone(pgid!) : Promise.resolve()).then(() => done({
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        exit: code,
        signal,
        startError,
        timedOut,
        killed: strays,
        pgid,
      }));
    });
  });
}
