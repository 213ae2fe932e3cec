import { createServer } from 'node:net';

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
