import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

/**
 * A file's first `limit` bytes as text; null when it cannot be read or is no regular file (a FIFO
 * is opened without blocking and refused, /dev/zero too). Never throws.
 */
export async function readHead(path: string, limit: number): Promise<string | null> {
  let fh;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const st = await fh.stat();
    if (!st.isFile()) return null;
    const buf = Buffer.alloc(Math.min(limit, st.size));
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } catch {
    return null;
  } finally {
    await fh?.close();
  }
}
