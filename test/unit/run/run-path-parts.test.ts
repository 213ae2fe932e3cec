import { describe, expect, it } from 'vitest';
import { runPathParts } from '../../../src/run/paths.js';

// Which log paths diagnose treats as a run's (then the run's exits count too): by shape alone.
describe('runPathParts', () => {
  it('a run folder, its logs folder (the whole run) and one log in it (that file)', () => {
    expect(runPathParts('/s/runs/r1')).toEqual({ stateDir: '/s', id: 'r1', file: null });
    expect(runPathParts('/s/runs/r1/logs')).toEqual({ stateDir: '/s', id: 'r1', file: null });
    expect(runPathParts('/s/runs/r1/logs/agg-0.log')).toEqual({ stateDir: '/s', id: 'r1', file: '/s/runs/r1/logs/agg-0.log' });
    expect(runPathParts('/s/runs/r1/logs/')).toEqual({ stateDir: '/s', id: 'r1', file: null });
  });

  it('any other path is no run\'s: a plain log, the runs folder itself, a file beside logs/', () => {
    expect(runPathParts('/tmp/worker.log')).toBeNull();
    expect(runPathParts('/s/runs')).toBeNull();
    expect(runPathParts('/s/runs/r1/run.json')).toBeNull();
    expect(runPathParts('/s/other/r1/logs/agg-0.log')).toBeNull();
  });
});
