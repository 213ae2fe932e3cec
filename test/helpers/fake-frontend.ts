import { freePort } from './ports.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { FIXTURES } from './cli.js';

// Starts the fake `python -m dynamo.frontend` (test/fixtures/python/dynamo/frontend) for e2e tests
// and waits for its /live, polling quickly instead of sleeping. Always stop() it in afterEach.

export interface FakeFrontend {
  url: string;
  port: number;
  child: ChildProcess;
  /** Everything it logged so far (stdout + stderr). */
  log(): string;
  /** Resolves once a log line matches (or rejects after timeoutMs). */
  waitForLog(re: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGTERM, then SIGKILL after 3 s; resolves with its exit code once it is gone. */
  stop(): Promise<number | null>;
}

export { freePort };

export async function startFakeFrontend(args: string[], vars: Record<string, string | undefined> = {}, timeoutMs = 10_000): Promise<FakeFrontend> {
  const port = await freePort();
  const child = spawn('python3', ['-m', 'dynamo.frontend', '--http-port', String(port), '--http-host', '127.0.0.1', ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PYTHONPATH: join(FIXTURES, 'python'), PYTHONDONTWRITEBYTECODE: '1', ...vars },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const waiters = new Set<() => void>();
  const onData = (b: Buffer) => {
    text += b.toString();
    for (const w of waiters) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let gone = false;
  void exited.then(() => (gone = true));

  const fe: FakeFrontend = {
    url: `http://127.0.0.1:${port}`,
    port,
    child,
    log: () => text,
    waitForLog(re, ms = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = text.split('\n').find((l) => re.test(l));
          if (m === undefined) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(m);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no log line matching ${re} within ${ms} ms; log:\n${text}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
    async stop() {
      if (!gone) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 3000);
        const code = await exited;
        clearTimeout(t);
        return code;
      }
      return exited;
    },
  };

  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (gone) throw new Error(`fake frontend exited before it was live; log:\n${text}`);
    try {
      const r = await fetch(`${fe.url}/live`, { signal: AbortSignal.timeout(500) });
      if (r.ok) return fe;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      await fe.stop();
      throw new Error(`fake frontend not live within ${timeoutMs} ms; log:\n${text}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
