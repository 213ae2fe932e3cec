import { describe, expect, it } from 'vitest';
import { classifyEngineCmd, engineProcesses, pythonModule } from '../../../src/host/procs/engine-procs.js';
import type { ProcessInfo } from '../../../src/host/types.js';

describe('classifyEngineCmd: engine processes', () => {
  it.each([
    'VLLM::EngineCore',
    'VLLM::EngineCore_DP0',
    'VLLM::DPEngineCore_0',
    'VLLM::Worker_TP0_EP0',
    'VLLM::Worker_DP1_EP1',
    'VLLM::EngineCore                                                    ', // setproctitle pads with spaces
    'VLLM::EngineCore 300',
  ])('%j is a vLLM engine', (cmd) => {
    expect(classifyEngineCmd(cmd)).toBe('vllm-engine');
  });

  it.each([
    'python -m dynamo.frontend --http-port 8000 --router-mode kv',
    'python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B --gpu-memory-utilization 0.38 --max-model-len 4096 --enforce-eager',
    '/home/u/.venv/bin/python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B --disaggregation-mode prefill',
    '/usr/bin/python3.12 -u -m dynamo.mocker --model-path Qwen/Qwen3-0.6B',
    'python3 -X faulthandler -W ignore -m dynamo.sglang --model-path x',
    'python3 -um dynamo.frontend',
    'python3 -mdynamo.frontend',
    'python3 -Wignore -B -m dynamo.planner.prometheus',
    '/opt/conda/envs/dyn/bin/python -m dynamo.frontend --http-port 8001',
  ])('%j is a Dynamo process', (cmd) => {
    expect(classifyEngineCmd(cmd)).toBe('dynamo');
  });
});

describe('classifyEngineCmd: not engine processes', () => {
  it.each([
    'vim vllm/v1/engine/core.py',
    'code --reuse-window /home/u/src/vllm/vllm/v1/engine/core.py',
    'less /tmp/VLLM::EngineCore.log',
    'grep VLLM',
    'grep -r VLLM::EngineCore .',
    'pgrep -f VLLM::',
    'pip install vllm',
    'python -m pip install vllm ai-dynamo[vllm]',
    'python3 -m vllm.entrypoints.openai.api_server --model x',
    'python3 -m pytest tests/dynamo.vllm_test.py',
    'python3 -c import dynamo.frontend',
    'python3 script.py -m dynamo.frontend',
    'python3 -m dynamo_dev',
    'python3 -m dynamos.frontend',
    'node /work/main/bin/dynamo-dev.js doctor --only procs.leftover',
    'node /usr/lib/node_modules/dynamo-dev/bin/dynamo-dev.js teardown --orphans',
    'bash -c python3 -m dynamo.frontend',
    'tail -f logs/agg-0.log',
    'sleep 300',
    '[kworker/0:1-events]',
    '',
    'xVLLM::EngineCore',
    'VLLM:: EngineCore',
  ])('%j is not', (cmd) => {
    expect(classifyEngineCmd(cmd)).toBeNull();
  });
});

describe('pythonModule', () => {
  it('reads the module after interpreter options, and nothing for scripts or -c', () => {
    expect(pythonModule(['python3', '-X', 'dev', '-m', 'dynamo.vllm'])).toBe('dynamo.vllm');
    expect(pythonModule(['python3', '--check-hash-based-pycs', 'never', '-m', 'dynamo.vllm'])).toBe('dynamo.vllm');
    expect(pythonModule(['python3', 'x.py'])).toBeNull();
    expect(pythonModule(['python3', '-c', 'pass'])).toBeNull();
    expect(pythonModule(['node', '-m', 'dynamo.vllm'])).toBeNull();
    expect(pythonModule(['python3', '-m'])).toBeNull();
  });
});

describe('engineProcesses', () => {
  const proc = (pid: number, cmd: string): ProcessInfo => ({
    pid, ppid: 1, uid: 1000, user: 'u', cmd, name: cmd.split(' ')[0], startTicks: 1, ageMs: 1, pgid: pid,
  });
  it('keeps engine processes with their kind', () => {
    const out = engineProcesses([proc(1, 'VLLM::EngineCore'), proc(2, 'vim vllm/core.py'), proc(3, 'python3 -m dynamo.frontend')]);
    expect(out.map((p) => [p.pid, p.kind])).toEqual([[1, 'vllm-engine'], [3, 'dynamo']]);
  });
});
