import { describe, expect, it } from 'vitest';
import { classifyEngineCmd, pythonModule } from '../../../src/host/procs/engine-procs.js';

// Command lines at the edges of "is this our engine": interpreters with unusual names, option
// forms of python's own command line, and blanks as /proc/PID/cmdline and ps give them.
describe('interpreters', () => {
  it.each([
    'python3.12d -m dynamo.frontend',
    'python3-dbg -m dynamo.frontend',
    '/python3 -m dynamo.frontend',
    '  python3  -m  dynamo.frontend  --http-port 8000',
  ])('%j is a Dynamo process', (cmd) => {
    expect(classifyEngineCmd(cmd)).toBe('dynamo');
  });

  it.each([
    'mypython3 -m dynamo.frontend',
    'python3.12-config -m dynamo.frontend',
    'python3 -m mydynamo.frontend',
    'python3 -m dynamo.frontend-old',
    'VLLM::EngineCore-old',
  ])('%j is not', (cmd) => {
    expect(classifyEngineCmd(cmd)).toBeNull();
  });

  it('a padded vLLM title still is one', () => {
    expect(classifyEngineCmd('  VLLM::EngineCore')).toBe('vllm-engine');
  });
});

describe('python\'s own options before -m', () => {
  it('a long option without an argument does not swallow -m', () => {
    expect(pythonModule(['python3', '--isolated', '-m', 'dynamo.frontend'])).toBe('dynamo.frontend');
  });

  it('-X and -W with their value attached take no next word', () => {
    expect(pythonModule(['python3', '-Xdev', '-m', 'dynamo.frontend'])).toBe('dynamo.frontend');
    expect(pythonModule(['python3', '-Wignore', '-m', 'dynamo.frontend'])).toBe('dynamo.frontend');
  });

  it('-c takes the next word as code, even one that looks like -m', () => {
    expect(pythonModule(['python3', '-c', '-mdynamo.frontend'])).toBeNull();
  });

  it('"-" is a script read from stdin: what follows are its arguments', () => {
    expect(pythonModule(['python3', '-', '-m', 'dynamo.frontend'])).toBeNull();
  });

  it('options only, or nothing at all: no module', () => {
    expect(pythonModule(['python3', '-u', '-B'])).toBeNull();
    expect(pythonModule([])).toBeNull();
  });
});
