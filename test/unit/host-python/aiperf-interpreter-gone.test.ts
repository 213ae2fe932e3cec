import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { findAiperf } from '../../../src/host/python/aiperf.js';

// An `aiperf` console script on PATH whose `#!` interpreter is gone (its venv deleted) cannot run:
// passed over for the next way of finding AIPerf, and named in how AIPerf was found.

const dir = mkdtempSync(join(tmpdir(), 'dd-aiperf-gone-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('a broken aiperf on PATH is passed over for `python -m aiperf`, and the report says why', async () => {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'aiperf'), '#!/gone/venv/bin/python3\n', { mode: 0o755 });
  const python = join(dir, 'python');
  writeFileSync(python, '#!/bin/sh\necho 0.13.0\n', { mode: 0o755 });
  const p = await findAiperf({ PATH: `${bin}:/usr/bin:/bin`, HOME: dir, XDG_CACHE_HOME: join(dir, 'cache') }, python);
  expect(p).toEqual({
    file: python,
    prefix: ['-m', 'aiperf'],
    version: '0.13.0',
    found: `python -m aiperf (${python}); the aiperf on PATH (${join(bin, 'aiperf')}) cannot run: its interpreter /gone/venv/bin/python3 is missing (its environment was moved or deleted)`,
  });
});

it('an aiperf on PATH run by `/usr/bin/env python3` (no absolute interpreter to check) is taken as it is', async () => {
  const bin = join(dir, 'bin2');
  mkdirSync(bin);
  writeFileSync(join(bin, 'aiperf'), '#!/usr/bin/env python3\n', { mode: 0o755 });
  const p = await findAiperf({ PATH: `${bin}:/usr/bin:/bin`, HOME: dir }, '/bin/false');
  expect(p).toMatchObject({ file: join(bin, 'aiperf'), prefix: [], found: `aiperf on PATH (${join(bin, 'aiperf')})`, version: null });
});
