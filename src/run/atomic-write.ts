import { mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { asDiskFull } from '../errors.js';
import { dirname } from 'node:path';

// Records (run.json, bench result.json) are written whole or not at all: tmp + rename, so a reader
// never sees half a document, even when the writer is SIGKILLed mid-write.

let tmpCounter = 0;
// Stryker disable next-line UpdateOperator: equivalent: counting down keeps every name of this process unique too
export const tmpName = (path: string) => `${path}.${process.pid}.${++tmpCounter}.tmp`;

export async function writeAtomic(path: string, text: string): Promise<void> {
  const tmp = tmpName(path);
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(tmp, text);
    await rename(tmp, path);
  } catch (err) {
    // A full disk leaves a short tmp file behind: removed, and the error names the record, not `write`.
    await unlink(tmp).catch(() => undefined);
    throw asDiskFull(err, path);
  }
}
