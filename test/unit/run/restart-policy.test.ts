import { describe, expect, it } from 'vitest';
import { decideRestart, endedHow, MAX_RESTARTS, parseRestartPolicy, policyText, type DeathView } from '../../../src/run/policy/restart-policy.js';
import { UserError } from '../../../src/errors.js';

// up --restart on-failure[:N]: the flag's values and which deaths are restarted.

const refused = (v: string) => {
  try {
    parseRestartPolicy(v);
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    return (e as Error).message;
  }
  throw new Error(`${v} was accepted`);
};

describe('parseRestartPolicy', () => {
  it('on-failure: no limit (as docker without max-retries); on-failure:N: at most N, 1 and the top accepted', () => {
    expect(parseRestartPolicy('on-failure')).toEqual({ mode: 'on-failure', max: null });
    expect(parseRestartPolicy('on-failure:1')).toEqual({ mode: 'on-failure', max: 1 });
    expect(parseRestartPolicy(`on-failure:${MAX_RESTARTS}`)).toEqual({ mode: 'on-failure', max: MAX_RESTARTS });
    expect(policyText({ mode: 'on-failure', max: null })).toBe('on-failure');
    expect(policyText({ mode: 'on-failure', max: 3 })).toBe('on-failure:3');
  });
  it('0, past the top, not a whole number, empty, signs: N must be 1-1000, naming the flag and what is valid', () => {
    for (const v of ['on-failure:0', `on-failure:${MAX_RESTARTS + 1}`, 'on-failure:x', 'on-failure:', 'on-failure:1.5', 'on-failure:-1', 'on-failure:+2', 'on-failure:1e2']) {
      expect(refused(v), v).toBe(`--restart: ${JSON.stringify(v)}: N must be a whole number 1-1000 (omit it for no limit); valid: on-failure (restart a worker that dies after the run was ready, no limit) or on-failure:N (at most N times per worker, N a whole number 1-1000)`);
    }
  });
  it('docker words this flag does not take (always, unless-stopped, no) and others: not a restart policy', () => {
    expect(refused('always')).toMatch(/^--restart: "always" is not a restart policy \(only failures are restarted: a worker that exits 0 meant to\); valid: on-failure /);
    expect(refused('unless-stopped')).toMatch(/^--restart: "unless-stopped" is not a restart policy \(only failures/);
    expect(refused('no')).toMatch(/^--restart: "no" is not a restart policy; valid: /);
    expect(refused('on-failures')).toMatch(/^--restart: "on-failures" is not a restart policy; valid: /);
  });
});

describe('decideRestart', () => {
  const death = (o: Partial<DeathView> = {}): DeathView => ({ role: 'agg', afterReady: true, code: null, signal: 'SIGKILL', error: null, restartsByPolicy: 0, ...o });
  const one = { mode: 'on-failure' as const, max: 1 };
  it('a worker killed or exiting non-zero after ready: restarted while under the limit', () => {
    expect(decideRestart(one, death())).toEqual({ restart: true });
    expect(decideRestart(one, death({ signal: null, code: 1, role: 'decode' }))).toEqual({ restart: true });
    expect(decideRestart({ mode: 'on-failure', max: null }, death({ restartsByPolicy: 999 }))).toEqual({ restart: true });
  });
  it('at the limit: not restarted, and why', () => {
    expect(decideRestart(one, death({ restartsByPolicy: 1 }))).toEqual({ restart: false, why: 'restart limit reached: restarted 1 time already (--restart on-failure:1)' });
    expect(decideRestart({ mode: 'on-failure', max: 2 }, death({ restartsByPolicy: 2 }))).toEqual({ restart: false, why: 'restart limit reached: restarted 2 times already (--restart on-failure:2)' });
    expect(decideRestart({ mode: 'on-failure', max: 2 }, death({ restartsByPolicy: 1 }))).toEqual({ restart: true });
  });
  it('exit code 0 is no failure: not restarted, said so', () => {
    expect(decideRestart(one, death({ signal: null, code: 0 }))).toEqual({ restart: false, why: 'it exited with code 0, not a failure (--restart on-failure:1 restarts failures only)' });
  });
  it("not the policy's business: before the run was ready (a bad config is up's failure), the frontend, no policy", () => {
    expect(decideRestart(one, death({ afterReady: false }))).toEqual({ restart: false, why: null });
    expect(decideRestart(one, death({ role: 'frontend' }))).toEqual({ restart: false, why: null });
    expect(decideRestart(null, death())).toEqual({ restart: false, why: null });
  });
  it('endedHow', () => {
    expect(endedHow({ code: null, signal: 'SIGKILL' })).toBe('was killed by SIGKILL');
    expect(endedHow({ code: 3, signal: null })).toBe('exited with code 3');
    expect(endedHow({ code: null, signal: null, error: 'ENOENT' })).toBe('could not be started (ENOENT)');
  });
});

describe('the crash-loop back-off (docker restartmanager: 100 ms doubling to 1 min, reset after 10 s up)', () => {
  it('starts at 100 ms, doubles while the process keeps ending within 10 s, caps at 60 s, resets after 10 s up', async () => {
    const { nextRestartDelay, backoffWords } = await import('../../../src/run/policy/restart-policy.js');
    expect(nextRestartDelay(null, 500)).toBe(100);
    expect(nextRestartDelay(100, 500)).toBe(200);
    expect(nextRestartDelay(200, 9_999)).toBe(400);
    expect(nextRestartDelay(400, 10_000)).toBe(100);
    expect(nextRestartDelay(40_000, 1)).toBe(60_000);
    expect(nextRestartDelay(60_000, 1)).toBe(60_000);
    expect(backoffWords({ delayMs: 800, upMs: 1530 })).toBe('ended 1.5 s after its start: started again after 800 ms (back-off doubles from 100 ms up to 1 min, reset once it stays up 10 s)');
  });
});
