import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeEnv, ROOT, tempHome } from '../helpers/cli.js';
import { killHomeProcesses } from '../helpers/home-processes.js';
import { freePort } from '../helpers/ports.js';

// The fakes must exit on SIGTERM wherever it lands. CI once saw teardown SIGKILL a fake mocker
// after its 10 s grace: its handler set a threading.Event, whose lock the main thread (waiting on
// that Event) or the handler itself (a second SIGTERM: teardown and the run's supervisor both send
// one) held at that moment. Where a real signal lands is luck (bench/fake-sigterm-stress.py counts
// it: 18 of 400 double SIGTERMs hung the mocker); the probe makes it certain: it re-runs each
// handler at every bytecode of its run and records every call the handler makes.
const PROBE = join(ROOT, 'test', 'helpers', 'sigterm_probe.py');
// What a handler may do: store a flag and write to a non-blocking pipe (test/fixtures/python/_fake_stop.py).
const FLAG_AND_PIPE = ['_fake_stop.StopRequest.handler', 'posix.write'];

interface Fake {
  what: string;
  module: string;
  args: (port: number) => string[];
  vars: (port: number) => Record<string, string>;
  /** Once this is printed, a SIGTERM reaches the fake's handler in its steady state. */
  ready: RegExp;
  /** What the fake logs as it shuts down. */
  stopped: RegExp[];
}

const FAKES: Fake[] = [
  {
    what: 'the mocker (dynamo.mocker)', module: 'dynamo.mocker', args: () => [], vars: (port) => ({ DYN_SYSTEM_PORT: String(port) }),
    ready: /Registered endpoint 'dynamo\.backend\.generate'/, stopped: [/Received shutdown signal, stopping worker/],
  },
  {
    what: 'the vLLM worker (dynamo.vllm) and its engine child', module: 'dynamo.vllm', args: () => [],
    vars: (port) => ({ DYN_SYSTEM_PORT: String(port), DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS: '0' }),
    ready: /Registered endpoint dyn:\/\//, stopped: [/Received shutdown signal, stopping worker/],
  },
  {
    what: 'the frontend (dynamo.frontend)', module: 'dynamo.frontend', args: (port) => ['--http-port', String(port), '--http-host', '127.0.0.1'],
    vars: () => ({}), ready: /sigterm-probe: handler for SIGINT/, stopped: [/Received signal, shutting down signal="SIGTERM"/, /HTTP service stopped/],
  },
  {
    what: 'the engine core (VLLM::EngineCore)', module: 'fake_engine_core', args: () => [], vars: () => ({}),
    ready: /sigterm-probe: handler for SIGTERM/, stopped: [],
  },
];

const homes: ReturnType<typeof tempHome>[] = [];
afterEach(() => {
  // Every process the probe started carries its home (DYNAMO_DEV_HOME): the engine child too.
  for (const h of homes.splice(0)) {
    killHomeProcesses(h.stateDir);
    h.cleanup();
  }
});

/** Resolves when `text()` matches, rejects after ms naming what it waited for. */
function waitFor(onData: (f: () => void) => void, text: () => string, re: RegExp, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${re} within ${ms} ms; output:\n${text()}`)), ms);
    const check = () => {
      if (re.test(text())) {
        clearTimeout(timer);
        resolve();
      }
    };
    onData(check);
    check();
  });
}

describe('the fakes exit on SIGTERM wherever it lands', () => {
  for (const f of FAKES) {
    it(`${f.what}: two SIGTERMs at once, and another at every bytecode of the handler: gone within 5 s; the handler only stores a flag and writes to a pipe`, async () => {
      const h = tempHome('dd-sigterm-');
      homes.push(h);
      const port = await freePort();
      const env = fakeEnv(h, { python: true, vars: { FAKE_ENGINE_MAX_S: '60', DYN_FILE_KV: h.dir, ...f.vars(port) } });
      const child = spawn('python3', [PROBE, f.module, ...f.args(port)], { env, cwd: h.dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      const listeners: (() => void)[] = [];
      const onData = (b: Buffer) => {
        out += b.toString();
        for (const l of listeners) l();
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
      await waitFor((l) => listeners.push(l), () => out, f.ready, 15_000);

      // As teardown of a detached run: its SIGTERM to the group, and the supervisor's right after.
      process.kill(-child.pid!, 'SIGTERM');
      process.kill(-child.pid!, 'SIGTERM');
      const gone = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 5000).unref())]);
      expect(gone, `still running 5 s after SIGTERM; output:\n${out}`).not.toBeNull();
      // Let the pipes drain: the probe's report is its last line.
      if (child.stdout!.readable) await once(child.stdout!, 'close');
      if (child.stderr!.readable) await once(child.stderr!, 'close');
      // Exit 0; or the second SIGTERM landed once the fake was finishing (Python puts the default
      // action back as it exits, after the probe's report): gone by SIGTERM all the same.
      expect([[0, null], [null, 'SIGTERM']], out).toContainEqual(gone);
      for (const re of f.stopped) expect(out).toMatch(re);
      const report = JSON.parse(/^sigterm-probe: (\{.*\})$/m.exec(out)?.[1] ?? 'null') as { runs: number; reentries: number; calls: string[] } | null;
      expect(report, out).not.toBeNull();
      // The handler ran, and was run again inside itself: a lock it takes would have hung it there.
      expect(report!.runs).toBeGreaterThanOrEqual(1);
      expect(report!.reentries).toBeGreaterThan(0);
      expect(report!.calls).toEqual(FLAG_AND_PIPE);
    }, 30_000);
  }
});
