import { type Check, type CheckResult, PYTHON_PROBE_TIMEOUT_MS, fail, pass } from '../types.js';

// python.env: the interpreter `up` would start can import what the recipe's processes import.
// vLLM recipes need dynamo, vllm and torch (and nixl to move KV between disaggregated workers);
// the mocker engine needs only dynamo.

/** What to pip-install for each module (Dynamo's install docs: `pip install "ai-dynamo[vllm]"`). */
const PIP: Record<string, string> = {
  dynamo: '"ai-dynamo[vllm]"',
  vllm: '"ai-dynamo[vllm]"',
  torch: '"ai-dynamo[vllm]"',
  nixl: 'nixl',
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
    const required = engine === 'mocker' ? ['dynamo'] : ['dynamo', 'vllm', 'torch'];
    if (engine === 'vllm' && facts.plan.disaggregated) required.push('nixl');
    const line = (name: string): string => {
      const m = py.modules[name];
      if (!m) return `${name}: not asked`;
      if (!m.ok) return `${name}: missing (${m.error ?? 'import failed'})`;
      return `${name} ${m.version ?? '(version unknown)'}${name === 'torch' && py.torchCuda ? ` (CUDA ${py.torchCuda})` : ''}`;
    };
    const shown = Object.keys(py.modules);
    const details = [`${interp}: Python ${py.pythonVersion ?? '?'}`, ...shown.map(line)];
    const evidence = {
      interpreter: interp,
      pythonVersion: py.pythonVersion,
      modules: py.modules,
      torchCuda: py.torchCuda,
      required,
    };
    const missing = required.filter((m) => !py.modules[m]?.ok);
    if (missing.length > 0) {
      const why = missing.map((m) => `${m} (${py.modules[m]?.error ?? 'not asked'})`).join(', ');
      const pkgs = [...new Set(missing.map((m) => PIP[m] ?? m))].join(' ');
      return fail(
        `${interp} cannot import ${missing.join(', ')}${engine === 'mocker' ? '' : ` (needed by the ${engine} engine${missing.includes('nixl') ? ' and disaggregated KV transfer' : ''})`}: ${why}`,
        `\`${interp} -m pip install ${pkgs}\`, or ${hint}`,
        details,
        evidence,
      );
    }
    const summary = [`Python ${py.pythonVersion ?? '?'}`, ...required.map(line)].join(', ');
    return pass(summary, evidence, details);
  },
};

export default check;
