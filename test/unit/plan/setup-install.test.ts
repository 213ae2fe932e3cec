import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  advance, dynamoOnly, envFolderName, envsRoot, NO_PROGRESS, normalInstall, parseInstallLine, parseMarker, parseSize, placeholderFailure,
  preferEnv, requirementsFor, requirementsInstall, venvStep, verifyStep, type InstallTools,
} from '../../../src/plan/setup-install.js';
import { compareVersions } from '../../../src/plan/dynamo-releases.js';
import { FIXTURES } from '../../helpers/cli.js';

// setup's command lines, its reading of a failed install, the fallback's requirements and the
// progress read from the installers' own output: every text here is what pip 23.2 / uv 0.13.9
// printed for ai-dynamo 1.6.1 on a machine that cannot reach pypi.nvidia.com.

const fixture = (name: string) => readFileSync(join(FIXTURES, 'setup', name), 'utf8');
const PIP_TOOLS: InstallTools = { installer: 'pip', basePython: '/usr/bin/python3.12', dir: '/c/dynamo-dev/envs/1.6.1-mocker' };
const UV_TOOLS: InstallTools = { installer: 'uv', uv: '/home/u/.local/bin/uv', basePython: '/usr/bin/python3.12', dir: '/c/dynamo-dev/envs/1.6.1-vllm' };

describe('where environments live', () => {
  it('under $XDG_CACHE_HOME, else ~/.cache, one folder per release and engine', () => {
    expect(envsRoot({ XDG_CACHE_HOME: '/xdg' }, '/home/u')).toBe('/xdg/dynamo-dev/envs');
    expect(envsRoot({ HOME: '/home/v' }, '/home/u')).toBe('/home/v/.cache/dynamo-dev/envs');
    expect(envsRoot({}, '/home/u')).toBe('/home/u/.cache/dynamo-dev/envs');
    expect(envFolderName('1.6.1', 'mocker')).toBe('1.6.1-mocker');
  });
});

describe('the command lines: venv + pip, or uv', () => {
  it('pip: python -m venv, then the environment\'s own pip; the vllm engine asks for the [vllm] extra', () => {
    expect(venvStep(PIP_TOOLS).argv).toEqual(['/usr/bin/python3.12', '-m', 'venv', '/c/dynamo-dev/envs/1.6.1-mocker']);
    expect(normalInstall(PIP_TOOLS, '1.6.1', 'mocker').argv).toEqual(['/c/dynamo-dev/envs/1.6.1-mocker/bin/python', '-m', 'pip', 'install', 'ai-dynamo==1.6.1']);
    expect(normalInstall(PIP_TOOLS, '1.6.1', 'vllm').argv.at(-1)).toBe('ai-dynamo[vllm]==1.6.1');
  });

  it('uv: uv venv --python BASE, then uv pip install --python ENV/bin/python', () => {
    expect(venvStep(UV_TOOLS).argv).toEqual(['/home/u/.local/bin/uv', 'venv', '--quiet', '--seed', '--python', '/usr/bin/python3.12', '/c/dynamo-dev/envs/1.6.1-vllm']);
    expect(normalInstall(UV_TOOLS, '1.6.1', 'vllm').argv).toEqual(['/home/u/.local/bin/uv', 'pip', 'install', '--python', '/c/dynamo-dev/envs/1.6.1-vllm/bin/python', 'ai-dynamo[vllm]==1.6.1']);
  });

  it('the fallback: ai-dynamo with --no-deps, then a requirements file; the check imports what the engine runs', () => {
    expect(dynamoOnly(PIP_TOOLS, '1.6.1').argv.slice(3)).toEqual(['install', '--no-deps', 'ai-dynamo==1.6.1']);
    expect(requirementsInstall(UV_TOOLS, '/c/r.txt', 12).argv.slice(-2)).toEqual(['-r', '/c/r.txt']);
    expect(requirementsInstall(UV_TOOLS, '/c/r.txt', 12).label).toBe('install its 12 pinned requirements');
    expect(verifyStep(PIP_TOOLS, 'mocker').argv).toEqual(['/c/dynamo-dev/envs/1.6.1-mocker/bin/python', '-c', 'import dynamo.frontend, dynamo.mocker']);
    expect(verifyStep(PIP_TOOLS, 'vllm').argv[2]).toBe('import dynamo.frontend, dynamo.mocker, dynamo.vllm');
  });
});

describe('a failed install read: the placeholder package, or anything else', () => {
  it('pip 23.2\'s metadata-generation-failed for aisimulate 0.13.0 (pypi.nvidia.com unreachable)', () => {
    expect(placeholderFailure(fixture('pip-placeholder-failed.txt'))).toEqual({ name: 'aisimulate', version: '0.13.0' });
  });

  it('uv 0.13.9\'s Failed to build `aisimulate==0.13.0`', () => {
    expect(placeholderFailure(fixture('uv-placeholder-failed.txt'))).toEqual({ name: 'aisimulate', version: '0.13.0' });
  });

  it('uv\'s header alone (the stub\'s message cut off) still names the package', () => {
    const text = fixture('uv-placeholder-failed.txt').replace(/The installation of[^\n]*\n/, '');
    expect(placeholderFailure(text)).toEqual({ name: 'aisimulate', version: '0.13.0' });
  });

  it('other failures are not the placeholder: no index at all, no such version, a build error of a real package', () => {
    const offline = 'ERROR: Could not find a version that satisfies the requirement ai-dynamo==1.6.1 (from versions: none)\nERROR: No matching distribution found for ai-dynamo==1.6.1';
    const build = '  × Preparing metadata (pyproject.toml) did not run successfully.\n  │ exit code: 1\nerror: metadata-generation-failed\n  RuntimeError: CUDA_HOME is not set';
    expect(placeholderFailure(offline)).toBeNull();
    expect(placeholderFailure(build)).toBeNull();
    expect(placeholderFailure('')).toBeNull();
  });
});

describe('the fallback\'s requirements: ai-dynamo 1.6.1\'s Requires-Dist without the placeholder', () => {
  const requires = fixture('ai-dynamo-1.6.1-requires.txt').split('\n');

  it('mocker: the 12 base requirements, aisimulate left out, no extra\'s', () => {
    expect(requirementsFor(requires, [], ['aisimulate'])).toEqual([
      'ai-dynamo-runtime==1.6.1', 'aiohttp<4.0,>=3.14.3', 'certifi>=2026.10.19', 'kubernetes<33.0.0,>=32.0.1', 'msgspec>=0.19.0',
      'prometheus-client<1.0,>=0.23.1', 'pyzmq>=26.0.0', 'redis<9.0.0,>=6.2.0', 'tqdm>=4.0.0', 'transformers>=4.56.0',
      'typing-extensions>=4.10.0', 'zstandard<1.0,>=0.23.0',
    ]);
  });

  it('vllm: the base plus the vllm extra with its pins (vLLM 0.31.0, NIXL 1.4.1), the extra clause removed', () => {
    const r = requirementsFor(requires, ['vllm'], ['aisimulate']);
    expect(r).toHaveLength(19);
    expect(r).toContain('vllm[flashinfer,otel,runai]==0.31.0');
    expect(r).toContain('nixl[cu13]==1.4.1');
    expect(r.some((x) => x.includes('extra') || x.startsWith('sglang') || x.startsWith('tensorrt'))).toBe(false);
  });

  it('other markers stay for the installer to judge; names compare normalised (PEP 503)', () => {
    expect(requirementsFor(["tomli; (python_version < '3.11') and extra == 'sglang'"], ['sglang'], [])).toEqual(["tomli; (python_version < '3.11')"]);
    expect(requirementsFor(["aisimulate==0.13.0; python_version >= '3.11'"], [], [])).toEqual(["aisimulate==0.13.0; python_version >= '3.11'"]);
    expect(requirementsFor(['AI_Simulate.x==1', 'ai-simulate-x==2', 'keep==1'], [], ['ai-simulate-x'])).toEqual(['keep==1']);
    expect(requirementsFor(['uvloop; extra == "vllm" and sys_platform != "win32"'], ['vllm'], [])).toEqual(['uvloop; sys_platform != "win32"']);
  });
});

describe('progress read from the installers\' output', () => {
  it('pip: collecting, downloading with sizes, using the cache, installing, installed', () => {
    expect(parseInstallLine('Collecting ai-dynamo==1.6.1')).toEqual({ kind: 'collecting', name: 'ai-dynamo' });
    expect(parseInstallLine('Collecting aiohttp<4.0,>=3.14.3 (from ai-dynamo==1.6.1)')).toEqual({ kind: 'collecting', name: 'aiohttp' });
    expect(parseInstallLine('  Downloading ai_dynamo-1.6.1-py3-none-any.whl (4.0 MB)')).toEqual({ kind: 'downloading', name: 'ai_dynamo-1.6.1-py3-none-any.whl', bytes: 4_000_000 });
    expect(parseInstallLine('  Using cached aiohttp-3.14.5-cp311-cp311-manylinux_2_17_x86_64.whl (1.7 MB)')).toMatchObject({ kind: 'downloading', bytes: 1_700_000 });
    expect(parseInstallLine('  Downloading aisimulate-0.13.0.tar.gz (27 kB)')).toMatchObject({ bytes: 27_000 });
    expect(parseInstallLine('Installing collected packages: ai-dynamo, tqdm, redis')).toEqual({ kind: 'installing', count: 3 });
    expect(parseInstallLine('Successfully installed ai-dynamo-1.6.1 tqdm-4.70.1')).toEqual({ kind: 'installed', count: 2 });
  });

  it('uv: resolved, downloading with sizes, downloaded, installed', () => {
    const lines = fixture('uv-placeholder-failed.txt').split('\n');
    expect(parseInstallLine(lines.find((l) => l.startsWith('Resolved'))!)).toEqual({ kind: 'resolved', count: 79 });
    expect(parseInstallLine('Downloading pyarrow (52.5MiB)')).toEqual({ kind: 'downloading', name: 'pyarrow', bytes: 55_050_240 });
    expect(parseInstallLine(' Downloaded pyarrow')).toEqual({ kind: 'downloaded', name: 'pyarrow' });
    expect(parseInstallLine('Installed 12 packages in 50ms')).toEqual({ kind: 'installed', count: 12 });
  });

  it('other lines say nothing; sizes in every unit the installers print', () => {
    expect(parseInstallLine('  Preparing metadata (pyproject.toml): started')).toBeNull();
    expect(parseInstallLine('Looking in links: /opt/wheels')).toBeNull();
    expect([parseSize('1.2 GB'), parseSize('1.2MiB'), parseSize('900 B'), parseSize('lots')]).toEqual([1_200_000_000, 1_258_291, 900, null]);
  });

  it('the real pip failure adds up: each package collected once, its download bytes summed', () => {
    let p = NO_PROGRESS;
    for (const l of fixture('pip-placeholder-failed.txt').split('\n')) {
      const parsed = parseInstallLine(l);
      if (parsed) p = advance(p, parsed);
    }
    expect(p).toMatchObject({ packages: 1, downloads: 1, bytes: 27_000, installed: null, current: 'aisimulate-0.13.0.tar.gz' });
  });
});

describe('the completion marker', () => {
  const marker = { schema: 1, release: '1.6.1', engine: 'mocker', installer: 'pip', dependencies: 'without-placeholder', placeholder: { name: 'aisimulate', version: '0.13.0' }, python: '/e/bin/python', basePython: { path: '/usr/bin/python3', version: '3.11.7' }, completedAt: '2026-12-05T14:00:00Z', durationMs: 1 };

  it('is read back whole; a torn or foreign file is not a marker', () => {
    const text = JSON.stringify(marker);
    expect(parseMarker(text)).toEqual(marker);
    expect(parseMarker(text.slice(0, text.length / 2))).toBeNull();
    expect(parseMarker('')).toBeNull();
    expect(parseMarker(JSON.stringify({ ...marker, schema: 2 }))).toBeNull();
    expect(parseMarker(JSON.stringify({ ...marker, engine: 'sglang' }))).toBeNull();
  });
});

describe('which managed environment other commands use', () => {
  const env = (release: string, engine: 'vllm' | 'mocker') => ({ marker: { release, engine } });

  it('the newest release that serves the engine; a vllm environment serves the mocker too, a mocker one never vLLM', () => {
    const all = [env('1.5.0', 'vllm'), env('1.6.1', 'mocker'), env('1.6.1', 'vllm')];
    expect(preferEnv(all, 'mocker', compareVersions)).toBe(all[1]);
    expect(preferEnv(all, 'vllm', compareVersions)).toBe(all[2]);
    expect(preferEnv([env('1.6.1', 'mocker')], 'vllm', compareVersions)).toBeNull();
    expect(preferEnv([env('1.5.0', 'mocker'), env('1.6.1', 'vllm')], 'mocker', compareVersions)?.marker.release).toBe('1.6.1');
    expect(preferEnv([], 'mocker', compareVersions)).toBeNull();
  });
});
