// Build step (npm run build, after tsc): the Python scripts that adapters run (src/**/*.py, e.g.
// src/host/ucx/nixl-probe.py) copied to the same place under dist/, which package.json `files`
// ships; tsc copies only what it compiles.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
  const p = join(dir, e.name);
  if (e.isDirectory()) return e.name === '__pycache__' ? [] : walk(p);
  return e.isFile() && e.name.endsWith('.py') ? [p] : [];
});
for (const f of walk(src)) {
  const to = join(root, 'dist', relative(src, f));
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(f, to);
}
