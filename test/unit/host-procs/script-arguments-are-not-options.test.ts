import { describe, expect, it } from 'vitest';
import { classifyEngineCmd, pythonModule } from '../../../src/host/procs/engine-procs.js';

// python stops reading its own options at the script name: a `-m dynamo.x` after it is the
// script's argument. Counting such a user script as a Dynamo process would make procs.leftover
// report it and `teardown --orphans` signal it.
describe('a python script given -m as its own argument', () => {
  it.each(['python3 run.py -m dynamo.frontend', 'python3 serve.py -m dynamo.vllm --model Qwen/Qwen3-0.6B', '/opt/venv/bin/python3 -u run.py -m dynamo.frontend'])(
    '%s is not a Dynamo process',
    (cmd) => {
      expect(classifyEngineCmd(cmd)).toBeNull();
      expect(pythonModule(cmd.split(' '))).toBeNull();
    },
  );

  it('the same options before the script name do run the module', () => {
    expect(classifyEngineCmd('/opt/venv/bin/python3 -u -m dynamo.frontend run.py')).toBe('dynamo');
  });
});
