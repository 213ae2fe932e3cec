import type { EngineKind, ProcessInfo } from '../types.js';

// Which processes are Dynamo / vLLM engine processes, judged from the FULL command line (FACTS §3:
// the kernel's comm is cut to 15 characters, "VLLM::EngineCor", so it can never be used).

/**
 * vLLM renames its engine and worker processes with setproctitle to `VLLM::<Name>`
 * (VLLM_PROCESS_NAME_PREFIX defaults to "VLLM"): VLLM::EngineCore, VLLM::EngineCore_DP0,
 * VLLM::DPEngineCore_0, VLLM::Worker_TP0_EP0, ... The title replaces argv, so it starts the line.
 */
const VLLM_TITLE = /^VLLM::[A-Za-z]\w*(\s|$)/;

/** python, python3, python3.12, python3.12d, python3-dbg, /opt/venv/bin/python3 ... */
const PYTHON = /^python(\d+(\.\d+)*)?[a-z]?(-dbg)?$/;

/** Long interpreter options that take a separate argument (python --help). */
const LONG_OPTS_WITH_ARG = new Set(['--check-hash-based-pycs']);

const DYNAMO_MODULE = /^dynamo\.[A-Za-z_]\w*(\.\w+)*$/;

function basename(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? p : p.slice(i + 1);
}

/** The module a `python [options] -m MODULE ...` command runs, or null for scripts, -c, REPLs. */
export function pythonModule(tokens: string[]): string | null {
  if (tokens.length === 0 || !PYTHON.test(basename(tokens[0]))) return null;
  for (let i = 1; i < tokens.length; i++) {
    const t = tokens[i];
    if (t === '-' || !t.startsWith('-')) return null; // a script (or stdin): python reads no more options
    if (t.startsWith('--')) {
      if (LONG_OPTS_WITH_ARG.has(t)) i++;
      continue;
    }
    // Short options may be bundled (-u, -uB, -um dynamo.x, -mdynamo.x, -Wignore, -X dev).
    for (let j = 1; j < t.length; j++) {
      const c = t[j];
      const attached = t.slice(j + 1);
      if (c === 'm') return attached || tokens[i + 1] || null;
      if (c === 'c') return null;
      if (c === 'W' || c === 'X') {
        if (!attached) i++;
        break;
      }
    }
  }
  return null;
}

/** 'vllm-engine' for VLLM::* titles, 'dynamo' for `python -m dynamo.<x>`, else null. */
export function classifyEngineCmd(cmd: string): EngineKind | null {
  const line = cmd.trim();
  if (VLLM_TITLE.test(line)) return 'vllm-engine';
  // Most processes on a machine are no Python interpreter, and their first word says so: the whole
  // line is split into words only for those that are (a machine runs thousands of processes).
  const end = line.search(/\s/);
  if (!PYTHON.test(basename(end < 0 ? line : line.slice(0, end)))) return null;
  const mod = pythonModule(line.split(/\s+/));
  if (mod && DYNAMO_MODULE.test(mod)) return 'dynamo';
  return null;
}

/** A plain copy of p with its kind (field by field: a listed process reads its details on first ask). */
export function withKind(p: ProcessInfo, kind: EngineKind): ProcessInfo & { kind: EngineKind } {
  return { pid: p.pid, ppid: p.ppid, uid: p.uid, user: p.user, cmd: p.cmd, name: p.name, startTicks: p.startTicks, ageMs: p.ageMs, pgid: p.pgid, kind };
}

/** The engine processes among `procs`, each with its kind. */
export function engineProcesses(procs: ProcessInfo[]): (ProcessInfo & { kind: EngineKind })[] {
  const out: (ProcessInfo & { kind: EngineKind })[] = [];
  for (const p of procs) {
    const kind = classifyEngineCmd(p.cmd);
    if (kind) out.push(withKind(p, kind));
  }
  return out;
}
