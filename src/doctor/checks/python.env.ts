import { SUPPORTED_BELOW, SUPPORTED_MIN, VERIFIED, versionSupport } from '../../plan/dynamo-releases.js';
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
      return `${name} ${m.version ?? '(version unknown)'}${name === 'torch' && py.torchCuda ? ` (CUDA ${py.torchCuda})` : ''}`;
    };
    const shown = Object.keys(py.modules);
    const details = [`${interp}: Python ${py.pythonVersion ?? '?'}`, ...shown.map(line)];
    const dynamoVersion = py.modules.dynamo?.ok ? py.modules.dynamo.version : null;
    const support = dynamoVersion ? versionSupport(dynamoVersion) : null;
    const evidence = {
      interpreter: interp,
      pythonVersion: py.pythonVersion,
      modules: py.modules,
      torchCuda: py.torchCuda,
      required,
      dynamo: { version: dynamoVersion, support, verified: VERIFIED, supported: `>=${SUPPORTED_MIN} <${SUPPORTED_BELOW}` },
    };
    const missing = required.filter((m) => !py.modules[m]?.ok);
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
    // The mocker's own modules repeat the dynamo line: one "ai-dynamo X" is enough in the summary.
    const summaryModules = engine === 'mocker' ? ['dynamo'] : required;
    const summary = [`Python ${py.pythonVersion ?? '?'}`, ...summaryModules.map(line)].join(', ');
    const range = `dynamo-dev plans for Dynamo ${SUPPORTED_MIN} up to ${SUPPORTED_BELOW} (exclusive) and its real-Dynamo tests run ${VERIFIED}`;
    if (support === 'too-old') {
      return fail(
        `${summary}: Dynamo ${dynamoVersion} is older than ${SUPPORTED_MIN}, the first release that runs on one host without etcd and NATS`,
        `\`${interp} -m pip install --upgrade ${engine === 'mocker' ? 'ai-dynamo' : '"ai-dynamo[vllm]"'}\`; see docs/dynamo-versions.md`,
        [...details, range],
        evidence,
      );
    }
    if (support === 'newer' || support === 'supported') {
      const what = support === 'newer'
        ? `Dynamo ${dynamoVersion} is newer than any release dynamo-dev knows: plans follow ${VERIFIED}'s flags`
        : `Dynamo ${dynamoVersion} is outside the range dynamo-dev has verified (${VERIFIED}): plans follow its release notes, untested here`;
      return warn(`${summary}; ${what}`, `to run the verified release: \`${interp} -m pip install ${engine === 'mocker' ? '' : '"'}ai-dynamo${engine === 'mocker' ? '' : '[vllm]'}==${VERIFIED}${engine === 'mocker' ? '' : '"'}\`; docs/dynamo-versions.md lists what changed between releases`, [...details, range], evidence);
    }
    return pass(support === 'verified' ? `${summary} (verified)` : summary, evidence, details);
  },
};

export default check;
