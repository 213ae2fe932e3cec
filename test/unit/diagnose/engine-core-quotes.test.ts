import { describe, expect, it } from 'vitest';
import { isEngineCoreLine, jsonLineToText } from '../../../src/diagnose/line.js';
import { scanText } from '../../../src/diagnose/scanner.js';

// The generic exception quotes the engine core's last exception before the worker's: which lines
// are the engine core's (vLLM's `(EngineCore_DP0 pid=N)` prefix, also under docker compose).
const quoted = (lines: string[]) => scanText('w.log', lines.join('\n')).findings.map((f) => [f.line, f.text]);

describe('engine core lines', () => {
  it('(EngineCore_DP0 pid=N) is the engine core, also behind a compose prefix', () => {
    expect(isEngineCoreLine('(EngineCore_DP0 pid=51207) ERROR 10-07 05:41:37 [core.py:710] KeyError: \'x\'')).toBe(true);
    expect(isEngineCoreLine('worker-1  | (EngineCore pid=51207) KeyError: \'x\'')).toBe(true);
    expect(isEngineCoreLine('\x1b[36m(EngineCore pid=51207)\x1b[0m KeyError: \'x\'')).toBe(true);
  });

  it('a worker line that mentions the engine core is not one of its lines', () => {
    expect(isEngineCoreLine('RuntimeError: lost contact with (EngineCore pid=51207)')).toBe(false);
    expect(isEngineCoreLine('(APIServer pid=51100) KeyError: \'x\'')).toBe(false);
  });

  it('the engine core\'s exception is quoted over a later worker line that only names it', () => {
    expect(quoted([
      '(EngineCore_DP0 pid=51207) ERROR 10-07 05:41:37 [core.py:710] IndexError: index 151936 is out of bounds',
      'RuntimeError: lost contact with (EngineCore_DP0 pid=51207)',
    ])).toEqual([[1, 'ERROR 10-07 05:41:37 [core.py:710] IndexError: index 151936 is out of bounds']]);
  });

  it('under docker compose too', () => {
    expect(quoted([
      'worker-1  | (EngineCore pid=51207) IndexError: index 151936 is out of bounds',
      'worker-1  | RuntimeError: the worker\'s own, later',
    ])).toEqual([[1, 'IndexError: index 151936 is out of bounds']]);
  });
});

describe('JSON lines with "time"', () => {
  it('the time is the head of the line, not repeated as a field', () => {
    expect(jsonLineToText('{"time":"05:12:21","level":"ERROR","message":"Address already in use"}')).toBe('05:12:21 ERROR Address already in use');
  });

  it('a level or time of null is left out of the head', () => {
    expect(jsonLineToText('{"time":null,"level":null,"message":"Address already in use"}')).toBe('Address already in use');
  });
});
