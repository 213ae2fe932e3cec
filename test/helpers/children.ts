import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/** SIGKILLs every child a test started (emptying the list) and waits until each has exited. */
export async function killChildren(children: ChildProcess[]): Promise<void> {
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const gone = once(c, 'exit');
    c.kill('SIGKILL');
    await gone;
  }
}
