import { spawn, type ChildProcess } from 'node:child_process';

// A real pseudo-terminal of a given size for e2e tests of the ink views, through util-linux
// script(1) (no native addon). Bytes written to `type()` go through the terminal's line
// discipline: '\x03' is a Ctrl-C that the kernel turns into SIGINT for the foreground process.

export interface Terminal {
  child: ChildProcess;
  /** Everything the program wrote, raw (escape codes included). */
  raw(): string;
  type(bytes: string): void;
  waitFor(re: RegExp, timeoutMs?: number): Promise<void>;
  exit: Promise<number | null>;
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function openTerminal(argv: string[], env: Record<string, string | undefined>, size: { cols: number; rows: number }): Terminal {
  const cmd = `stty cols ${size.cols} rows ${size.rows}; exec ${argv.map(q).join(' ')}`;
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env: { ...env, TERM: 'xterm-256color' } as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  const waiters = new Set<() => void>();
  // One byte stream decoded as such: a multi-byte character (a bar's █) split between two reads of
  // the terminal must not become two U+FFFD (it did: '████��████' in a fresh clone, by chance).
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (d) => {
    out += d;
    for (const w of [...waiters]) w();
  });
  child.stderr!.on('data', (d) => (out += d));
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    child,
    raw: () => out,
    type: (bytes) => void child.stdin!.write(bytes),
    waitFor(re, timeoutMs = 20_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (re.test(stripTerm(out))) {
            clearTimeout(t);
            waiters.delete(check);
            resolve();
          }
        };
        const t = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`terminal never showed ${re} within ${timeoutMs} ms:\n${stripTerm(out)}`));
        }, timeoutMs);
        waiters.add(check);
        void exit.then(() => setTimeout(() => {
          if (waiters.has(check)) {
            waiters.delete(check);
            clearTimeout(t);
            reject(new Error(`exited before showing ${re}:\n${stripTerm(out)}`));
          }
        }, 100));
        check();
      });
    },
    exit,
  };
}

/** The text without colours and cursor moves, CRLF as LF (what a log of the screen would hold). */
export function stripTerm(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007]*\u0007|\u001b[=>]/g, '').replace(/\r\n/g, '\n');
}

/**
 * The final text `up` printed after its live view was gone: from the last occurrence of `start`
 * on. The live view redraws with cursor moves, the final text never does.
 */
export function finalText(raw: string, start: string): string {
  const text = stripTerm(raw).replace(/\r/g, '');
  const i = text.lastIndexOf(start);
  return i < 0 ? '' : text.slice(i);
}
