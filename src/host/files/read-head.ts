import { open } from 'node:fs/promises';

/** A file's first `limit` bytes as text; null when it cannot be read. Never throws. */
export async function readHead(path: string, limit: number): Promise<string | null> {
  let fh;
  try {
    fh = await open(path, 'r');
    const buf = Buffer.alloc(Math.min(limit, (await fh.stat()).size));
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } catch {
    return null;
  } finally {
    await fh?.close();
  }
}
