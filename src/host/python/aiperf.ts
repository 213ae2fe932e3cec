import { spawn } from 'node:child_process';
import { constants, existsSync, fstatSync, openSync, closeSync, readSync } from 'node:fs';
import { RECORDS_FILE } from './aiperf-records.js';
import { EXPORT_FILE } from './aiperf-export.js';
import { join } from 'node:path';
import { runProgram } from '../procs/run-program.js';
import { onPath, readAiperfEnv } from './installer.js';
import { AIPERF_VERSION, aiperfFolderName, envsRoot } from '../../plan/setup-install.js';
import { homedir } from 'node:os';
import { readHead } from '../files/read-head.js';
import { isExecutable } from '../files/executable.js';
import { UserError } from '../../errors.js';

// AIPerf (NVIDIA's load generator, `aiperf profile`): the one adapter that finds and runs it.
// Found as `aiperf` on PATH, else as `python -m aiperf` in the interpreter's environment (the
// managed one `setup` builds, or --python). Its argv is built by src/bench/aiperf-argv.ts and its
// export parsed by src/host/python/aiperf-export.ts; here only the program is found and run.

type Env = Readonly<Record<string, string | undefined>>;

export interface AiperfProgram {
  /** The program and the arguments before AIPerf's own (`python -m aiperf`). */
  file: string;
  prefix: string[];
  /** How it was found, for the report: "aiperf on PATH (/usr/bin/aiperf)". */
  found: string;
  version: string | null;
}

/**
 * How a user gets AIPerf: a command to paste (issue 31). `setup` installs it in an environment of
 * its own (envs/aiperf-0.13.0), which bench then finds; `tool` is the CLI as the user invoked it.
 */
export const aiperfFix = (tool: string): string => `${tool} setup   (installs AIPerf ${AIPERF_VERSION} in an environment of its own beside Dynamo's; bench finds it there)`;

/** The first executable `aiperf` on env.PATH, or null. */
export const aiperfOnPath = (env: Env): string | null => onPath('aiperf', env);

const VERSION_OF = 'import importlib.metadata as m\ntry:\n print(m.version("aiperf"))\nexcept m.PackageNotFoundError:\n print("")';

/**
 * AIPerf as the user has it: on PATH, else importable by `python`. Its version from the package
 * metadata (importing aiperf itself takes seconds). Null when neither has it.
 */
export async function findAiperf(env: Env, python: string, timeoutMs = 20_000): Promise<AiperfProgram | null> {
  const onPath = aiperfOnPath(env);
  // A console script whose interpreter is gone (its venv moved or deleted) cannot run: the kernel
  // says only ENOENT, naming neither file. Passed over for the next way, and named.
  let unrunnable: string | null = null;
  if (onPath) {
    // A console script's first line names its interpreter: ask that one for the version.
    let version: string | null = null;
    let interp: string | null = null;
    try {
      // Its first 512 bytes only, never blocking: a FIFO or a 1 GiB binary named aiperf is no script.
      const head = ((await readHead(onPath, 512)) ?? '').split('\n')[0];
      interp = head.startsWith('#!') ? head.slice(2).trim().split(/\s+/)[0] : null;
    } catch {
      // not a script we can read: no version
    }
    if (interp && interp.startsWith('/') && !isExecutable(interp)) {
      unrunnable = `the aiperf on PATH (${onPath}) cannot run: its interpreter ${interp} is missing (its environment was moved or deleted)`;
    } else {
      if (interp && !interp.endsWith('/env') && !interp.endsWith('sh')) {
        const r = await runProgram(interp, ['-c', VERSION_OF], { env, timeoutMs });
        version = r.exitCode === 0 && r.stdout.trim() ? r.stdout.trim() : null;
      }
      return { file: onPath, prefix: [], found: `aiperf on PATH (${onPath})`, version };
    }
  }
  const passedOver = unrunnable ? `; ${unrunnable}` : '';
  // The environment `dynamo-dev setup` made for it (issue 31): envs/aiperf-<version>.
  const managed = readAiperfEnv(join(envsRoot(env, homedir()), aiperfFolderName()));
  if (managed) return { file: managed.python, prefix: ['-m', 'aiperf'], found: `the AIPerf environment setup made (${managed.dir})${passedOver}`, version: managed.version };
  const r = await runProgram(python, ['-c', VERSION_OF], { env, timeoutMs });
  const version = r.exitCode === 0 ? r.stdout.trim() : '';
  if (version) return { file: python, prefix: ['-m', 'aiperf'], found: `python -m aiperf (${python})${passedOver}`, version };
  if (unrunnable) throw new UserError(`AIPerf cannot run: ${unrunnable}; no AIPerf environment from setup, and \`${python} -m aiperf\` has none`, `${aiperfFix('dynamo-dev')}, or reinstall the one on PATH`);
  return null;
}

export interface AiperfRun {
  /** Resolves with how AIPerf ended. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; error: string | null }>;
  /** Stops it and everything it started (its own process group): SIGINT, SIGKILL after graceMs. */
  stop(graceMs?: number): void;
}

/**
 * Runs `aiperf profile ...` in its own process group (AIPerf starts worker processes of its own; a
 * group signal reaches them all), output appended to logFile.
 */
export function runAiperf(p: AiperfProgram, args: string[], o: { env: Env; logFile: string; cwd: string }): AiperfRun {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.env)) if (v !== undefined) env[k] = v;
  const fd = openSync(o.logFile, 'a', 0o600);
  let child;
  try {
    child = spawn(p.file, [...p.prefix, ...args], { env, cwd: o.cwd, detached: true, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  let exited = false;
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error: string | null }>((resolve) => {
    child.once('error', (err) => {
      exited = true;
      resolve({ code: null, signal: null, error: `${p.file}: ${(err as NodeJS.ErrnoException).code ?? err.message}` });
    });
    child.once('exit', (code, signal) => {
      exited = true;
      resolve({ code, signal, error: null });
    });
  });
  const group = (sig: NodeJS.Signals) => {
    if (!child.pid) return;
    try {
      process.kill(-child.pid, sig);
    } catch {
      // the group is gone
    }
  };
  // Our own exit (a crash) must not leave a load running against nothing.
  const onExit = () => group('SIGKILL');
  process.once('exit', onExit);
  void done.then(() => process.off('exit', onExit));
  return {
    done,
    stop(graceMs = 5000) {
      if (exited) return;
      group('SIGINT');
      const t = setTimeout(() => group('SIGKILL'), graceMs);
      t.unref();
      void done.then(() => {
        clearTimeout(t);
        // What it started may outlive the leader: the group gets the KILL too.
        group('SIGKILL');
      });
    },
  };
}

/** AIPerf's aggregate export in an artifact folder, or null when it wrote none. */
/**
 * AIPerf's per-request records (profile_export.jsonl) in `dir`, or null: not there, not a plain
 * file, or larger than `maxBytes` (a bench of a few hundred requests writes well under 1 MiB per
 * run). Opened without following a link and without blocking.
 */
export function readRecords(dir: string, maxBytes = 32 * 1024 * 1024): string | null {
  let fd: number;
  try {
    fd = openSync(join(dir, RECORDS_FILE), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > maxBytes) return null;
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < st.size) {
      const n = readSync(fd, buf, off, st.size - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export function findExport(dir: string): string | null {
  const p = join(dir, EXPORT_FILE);
  return existsSync(p) ? p : null;
}
