import { createServer } from 'node:net';
import { fetchRefuses } from '../../src/plan/fetch-bad-ports.js';

/** A port nobody uses right now (bound on 127.0.0.1 and released): tests never share fixed ports. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** True when nothing listens on the port on any IPv4 address (we can bind it ourselves). */
export function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '0.0.0.0', () => srv.close(() => resolve(true)));
  });
}

/**
 * The first port of a random block in [from, from + step x blocks) whose ports base + offset are
 * all bindable and none one fetch refuses: each e2e file draws from its own range, so parallel
 * files never collide.
 */
export async function freeBlock(from: number, blocks: number, step: number, offsets: number[]): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const b = from + step * Math.floor(Math.random() * blocks);
    // A run asked over fetch on 6000 or 10080 could never be ready: up refuses such ports (exit 2).
    if (offsets.some((o) => fetchRefuses(b + o))) continue;
    if ((await Promise.all(offsets.map((o) => bindable(b + o)))).every(Boolean)) return b;
  }
  throw new Error(`no free block of ports in ${from}-${from + step * blocks}`);
}

/**
 * A free port for a worker's DYN_SYSTEM_PORT: Dynamo reads it as a signed 16-bit number, so it must
 * be <= 32767, below the ephemeral range where port-0 servers land. Drawn from 32,700-32,766, apart
 * from the ranges the other e2e files use.
 */
export async function freeSystemPort(): Promise<number> {
  return freeBlock(32_700, 67, 1, [0]);
}
