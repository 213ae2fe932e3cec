import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

// Records (run.json, bench result.json) are written whole or not at all: tmp + rename, so a reader
// never sees half a document, even when the writer is SIGKILLed mid-write.

let tmpCounter = 0;
// Stryker disable next-line UpdateOperator: equivalent: counting down keeps every name of this process unique too
export const tmpName = (path: string) => `${path}.${process.pid}.${++tmpCounter}.tmp`;

export async function writeAtomic(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = tmpName(path);
  await writeFile(tmp, text);
  await rename(tmp, path);
}
