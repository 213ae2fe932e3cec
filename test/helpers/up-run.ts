import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { BIN, fakeEnv, runCli, tempHome } from './cli.js';
import { portBlock, records } from './runs.js';
import { killHomeProcesses } from './home-processes.js';

export { records, survivors } from './runs.js';

// Driving `up` end to end through the built binary with the fake frontend and workers
// (test/fixtures/python) and the fake nvidia-smi: a state dir and port block per test, `up` as a
// child whose NDJSON events can be awaited, and a cleanup that leaves no process behind.

export type Ev = Record<string, any> & { event: string };

export interface Started {
  child: ChildProcess;
  events: Ev[];
  stderr: () => string;
  stdout: () => string;
  /** The first event `pred` accepts; rejects when `up` exits first or after timeoutMs (null: the test's own timeout bounds the wait). */
  waitEvent(pred: (e: Ev) => boolean, timeoutMs?: number | null): Promise<Ev>;
  exit: Promise<{ code: number | null; signal: string | null }>;
}

export type UpSetup = Awaited<ReturnType<UpHarness['setup']>>;

export function startUp(args: string[], env: Record<string, string | undefined>, children: ChildProcess[]): Started {
  const child = spawn(process.execPath, [BIN, ...args], { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const events: Ev[] = [];
  let out = '';
  let err = '';
  const waiters: { pred: (e: Ev) => boolean; resolve: (e: Ev) => void }[] = [];
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d) => (err += d));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    out += `${line}\n`;
    if (!line.startsWith('{')) return;
    const e = JSON.parse(line) as Ev;
    events.push(e);
    for (const w of [...waiters]) if (w.pred(e)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(e);
    }
  });
  const exit = new Promise<{ code: number | null; signal: string | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  return {
    child, events, exit, stderr: () => err, stdout: () => out,
    waitEvent(pred, timeoutMs = 20_000) {
      const seen = events.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const t = timeoutMs === null ? undefined
          : setTimeout(() => reject(new Error(`no such event within ${timeoutMs} ms; got ${events.map((e) => e.event).join(', ')}\n${err}`)), timeoutMs);
        const w = { pred, resolve: (e: Ev) => { clearTimeout(t); resolve(e); } };
        waiters.push(w);
        void exit.then(() => setTimeout(() => {
          if (waiters.includes(w)) { clearTimeout(t); reject(new Error(`up exited before the event; got ${events.map((e) => e.event).join(', ')}\n${err}`)); }
        }, 50));
      });
    },
  };
}

export interface UpHarness {
  children: ChildProcess[];
  /**
   * A fresh state dir + fake env and a block of free ports. Random blocks in 21,000-30,999 (below
   * the ephemeral range, 32768+, where other test files' port-0 servers land; up-script.test.ts
   * draws from 11,000-20,999), each port checked, so parallel test files never collide.
   */
  setup(vars?: Record<string, string>): Promise<ReturnType<typeof tempHome> & {
    env: Record<string, string | undefined>;
    ports: { http: number; system: number; kvEvents: number; nixl: number };
    sets: string[];
  }>;
  startUp(args: string[], env: Record<string, string | undefined>): Started;
  /** afterEach: SIGKILL the `up`s, tear down every run, SIGKILL what is left of their groups, remove the homes. */
  cleanup(): Promise<void>;
}

/**
 * After a test: teardown through the CLI (the graceful stop a user would run), then SIGKILL whatever
 * of the home's runs a broken or timed-out teardown left (home-processes.ts: by run marker, state
 * dir and recorded supervisor), so a failing test never leaves a fake behind.
 */
export async function stopRuns(stateDir: string, env: Record<string, string | undefined>): Promise<void> {
  if (records(stateDir).length > 0) await runCli(['teardown', '--grace', '1'], env, { timeoutMs: 20_000 });
  killHomeProcesses(stateDir);
}

export function upHarness(prefix = 'dd-up-'): UpHarness {
  const homes: ReturnType<typeof tempHome>[] = [];
  const children: ChildProcess[] = [];
  return {
    children,
    async setup(vars = {}) {
      const h = tempHome(prefix);
      homes.push(h);
      const base = await portBlock(21_000, 500);
      const ports = { http: base, system: base + 1, kvEvents: base + 10, nixl: base + 15 };
      const sets = [
        '--set', `frontend.httpPort=${ports.http}`, '--set', `ports.system=${ports.system}`,
        '--set', `ports.kvEvents=${ports.kvEvents}`, '--set', `ports.nixlSideChannel=${ports.nixl}`,
      ];
      const env = fakeEnv(h, { gpu: 'laptop-570', python: true, vars: { FAKE_ENGINE_MAX_S: '120', ...vars } });
      return { ...h, env, ports, sets };
    },
    startUp: (args, env) => startUp(args, env, children),
    async cleanup() {
      for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      for (const h of homes.splice(0)) {
        await stopRuns(h.stateDir, fakeEnv(h, { python: true }));
        h.cleanup();
      }
    },
  };
}
