import { closeSync, fstatSync } from 'node:fs';

// After the terminal hung up (SIGHUP, window closed), Node 20 aborts at exit: it restores the
// terminal mode of each stdio fd that was a TTY, gets EIO, and fails an assertion (SIGABRT, a core
// dump where those are enabled). Closing those fds first makes it skip them. A hung-up TTY no
// longer answers isatty(), so every character device among 0-2 is closed (pipes and files are
// kept). Call it only at the very end, once a write failed with EIO: nothing can be shown anyway.
export function releaseLostTerminal(): void {
  for (const fd of [0, 1, 2]) {
    try {
      if (fstatSync(fd).isCharacterDevice()) closeSync(fd);
    } catch {
      // already closed
    }
  }
}
