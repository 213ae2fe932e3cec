import { join } from 'node:path';
import { readBounded } from '../files/bounded-read.js';

// A Hugging Face cache's refs/main (FACTS §6: models--ORG--NAME/refs/main holds the snapshot's
// revision). HF caches are often shared between users: a FIFO or a huge file planted there must
// not hang doctor, up or kv (a FIFO did: doctor timed out and never exited), so it is read bounded.

/** A revision is a 40-hex commit hash; a ref file is never more than a line. */
const MAX_REF_BYTES = 4096;

/** refs/main's revision in a model's cache folder; null when it is absent, empty or not a small regular file. */
export async function readMainRef(modelDir: string): Promise<string | null> {
  const r = await readBounded(join(modelDir, 'refs', 'main'), { maxBytes: MAX_REF_BYTES });
  return r.ok ? r.text.trim() || null : null;
}
