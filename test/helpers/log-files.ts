import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { tempHome } from './cli.js';

/**
 * Log files for one test file, in a temp folder removed after its tests: `file(text)` writes a new
 * one and returns its path. Call at module level (it registers afterAll).
 */
export function logFiles(prefix: string): { dir: string; file: (text: string) => string } {
  const h = tempHome(prefix);
  afterAll(() => h.cleanup());
  let n = 0;
  return {
    dir: h.dir,
    file(text: string) {
      const p = join(h.dir, `f${n++}.log`);
      writeFileSync(p, text);
      return p;
    },
  };
}
