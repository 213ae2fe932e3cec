import { mkdir } from 'node:fs/promises';
import { writeWholeFile } from '../host/files/exclusive-write.js';
import { asDiskFull } from '../errors.js';
import { dirname } from 'node:path';

// Records (run.json, bench result.json) are written whole or not at all: tmp + rename, so a reader
// never sees half a document, even when the writer is SIGKILLed mid-write.


export async function writeAtomic(path: string, text: string): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true });
    // Exclusive, unguessable temporary (src/host/files): a file or link planted at a predictable
    // name in the state dir is never followed or removed; a full disk leaves no temporary behind.
    await writeWholeFile(path, text);
  } catch (err) {
    // The error names the record, not `write`.
    throw asDiskFull(err, path);
  }
}
