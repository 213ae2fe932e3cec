#!/usr/bin/env node
// npm run mutate [-- FOLDER... | STRYKER FLAGS]: Stryker over the scope in stryker.config.mjs, then
// the score per folder (bench/mutation-summary.mjs). Not part of npm test or CI (bench/MUTATION.md).
//   npm run mutate                        everything in scope
//   npm run mutate -- --incremental       reuse the last run's results for unchanged code and tests
//   npm run mutate -- src/plan src/probe  only these folders (their own incremental file)
//   npm run mutate -- --concurrency 2     any other stryker flag passes through
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCOPE } from '../stryker.config.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const folders = [];
const pass = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a.startsWith('-')) {
    pass.push(a);
    // a flag's value follows it unless it is another flag (stryker's boolean flags take none)
    if (!a.includes('=') && i + 1 < args.length && !args[i + 1].startsWith('-') && !isFolder(args[i + 1])) pass.push(args[++i]);
  } else if (isFolder(a)) {
    folders.push(relative(root, join(root, a)).replace(/\/+$/, ''));
  } else {
    console.error(`mutate: ${a} is neither a folder under src/ nor a flag; e.g. npm run mutate -- src/plan --incremental`);
    process.exit(2);
  }
}

function isFolder(a) {
  const p = join(root, a);
  return a.startsWith('src') && existsSync(p) && statSync(p).isDirectory();
}

const strykerArgs = ['run', 'stryker.config.mjs'];
if (folders.length > 0) {
  // The scope's own globs, kept only where they lie inside a chosen folder (or the folder lies inside
  // them): `src/host` means its pure parsers, never its adapters.
  const globs = [];
  for (const f of folders) {
    for (const g of SCOPE) {
      const base = g.slice(0, g.lastIndexOf('/'));
      const gBase = base.replace(/\/\*\*$/, '');
      if (gBase === f || gBase.startsWith(`${f}/`)) globs.push(g);
      else if (f.startsWith(`${gBase}/`) && g.includes('**')) globs.push(`${f}/**/*.ts`);
    }
  }
  if (globs.length === 0) {
    console.error(`mutate: none of ${folders.join(', ')} is in scope (stryker.config.mjs SCOPE)`);
    process.exit(2);
  }
  strykerArgs.push('--mutate', [...new Set(globs)].join(','));
  // A narrowed run keeps its own incremental file, so it never drops the other folders' results
  // from the full run's file.
  strykerArgs.push('--incrementalFile', `reports/mutation/incremental-${folders.join('+').replaceAll('/', '_')}.json`);
}
// Every run writes the incremental file (--incremental --force: test every mutant, then store the
// results); only an explicit --incremental reuses it.
if (!pass.includes('--incremental')) strykerArgs.push('--incremental', '--force');
strykerArgs.push(...pass);

const started = Date.now();
// The sandbox copies dist/: the unmutated build a few unit tests start as a second process.
const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) {
  console.error(`mutate: npm run build failed (exit ${build.status ?? build.signal}); fix the build first`);
  process.exit(1);
}
const bin = join(root, 'node_modules', '.bin', 'stryker');
const run = spawnSync(bin, strykerArgs, { cwd: root, stdio: 'inherit' });
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
if (run.status !== 0) {
  console.error(`mutate: stryker exited ${run.status ?? run.signal} after ${minutes} min`);
  process.exit(run.status ?? 1);
}
const summary = spawnSync(process.execPath, [join(root, 'bench', 'mutation-summary.mjs')], { cwd: root, stdio: 'inherit' });
console.log(`\nmutate: ${minutes} min wall (stryker ${strykerArgs.slice(2).join(' ') || 'full scope'})`);
process.exit(summary.status ?? 1);
