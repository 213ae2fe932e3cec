import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, tempHome } from '../helpers/cli.js';

// The README's install: `npm pack`, then the tarball installed into an empty prefix gives a
// `dynamo-dev` that runs with only the runtime dependencies (no dev dependency, no checkout).

describe('install from the packed tarball', () => {
  it('npm pack + npm install -g --prefix EMPTY: a working dynamo-dev on that prefix\'s bin', async () => {
    const h = tempHome('dd-install-');
    try {
      const packDir = join(h.dir, 'pack');
      mkdirSync(packDir);
      // --ignore-scripts: the build is already done (npm test builds first); pack only collects `files`.
      const pack = await execa('npm', ['pack', '--ignore-scripts', '--pack-destination', packDir, '--json'], { cwd: ROOT, reject: false });
      expect(pack.exitCode, pack.stderr).toBe(0);
      const files = (JSON.parse(pack.stdout)[0].files as { path: string }[]).map((f) => f.path);
      expect(files).toContain('bin/dynamo-dev.js');
      expect(files).toContain('dist/cli.js');
      // The NIXL probe's script runs from the package (copied into dist by the build).
      expect(files).toContain('dist/host/ucx/nixl-probe.py');
      expect(files.some((f) => f.startsWith('recipes/'))).toBe(true);
      expect(files.some((f) => f.startsWith('test/') || f.startsWith('src/'))).toBe(false);
      const tgz = join(packDir, readdirSync(packDir).find((f) => f.endsWith('.tgz'))!);
      const prefix = join(h.dir, 'prefix');
      const inst = await execa('npm', ['install', '-g', '--prefix', prefix, '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', tgz], { reject: false, timeout: 240_000 });
      expect(inst.exitCode, inst.stderr).toBe(0);
      const bin = join(prefix, 'bin', 'dynamo-dev');
      expect(existsSync(bin)).toBe(true);
      expect(readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
      const pkgDir = join(prefix, 'lib', 'node_modules', 'dynamo-dev');
      // No dev dependency was installed, so none can be needed at run time.
      for (const dev of ['vitest', 'typescript', 'ink-testing-library']) expect(existsSync(join(pkgDir, 'node_modules', dev))).toBe(false);
      const env = { PATH: `${join(prefix, 'bin')}:/usr/bin:/bin`, HOME: h.dir, DYNAMO_DEV_HOME: h.stateDir, NO_COLOR: '1' };
      const run = (args: string[]) => execa('dynamo-dev', args, { env, extendEnv: false, reject: false, cwd: h.dir });
      expect((await run(['--version'])).stdout).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
      const recipes = await run(['recipes']);
      expect(recipes.exitCode).toBe(0);
      expect(recipes.stdout).toContain('agg-router');
      const plan = await run(['up', 'agg-router', '--dry-run']);
      expect(plan.exitCode, plan.stderr).toBe(0);
      expect(plan.stdout).toContain('plan: agg-router');
      const help = await run(['up', '--help']);
      const docs = /^Docs: (\S+)$/m.exec(help.stdout)![1];
      expect(docs.startsWith(pkgDir)).toBe(true);
      expect(existsSync(docs)).toBe(true);
      const status = await run(['status']);
      expect(status.exitCode).toBe(0);
      // ucx.transports runs the installed probe script (the fake NIXL replays the real one, FAKE_NIXL).
      const probe = await execa('dynamo-dev', ['doctor', '--recipe', 'disagg-same-gpu', '--only', 'ucx.transports', '--json'], {
        env: { ...env, PYTHONPATH: join(ROOT, 'test', 'fixtures', 'python'), PYTHONDONTWRITEBYTECODE: '1', FAKE_NIXL: 'default' }, extendEnv: false, reject: false, cwd: h.dir,
      });
      const ucx = (JSON.parse(probe.stdout) as { checks: { status: string; summary: string }[] }).checks[0];
      expect(ucx.summary).toMatch(/ moved 4 MiB each way between two processes over cma\/memory/);
    } finally {
      rmSync(h.dir, { recursive: true, force: true });
    }
  }, 300_000);
});
