import { afterAll, describe, expect, it } from 'vitest';
import { fakeEnv, runCli, tempHome } from '../helpers/cli.js';

// Colour in pipes: none by default and none with NO_COLOR, even when FORCE_COLOR (a CI setting)
// would turn it on; FORCE_COLOR alone colours a pipe, as chalk users expect.
const home = tempHome();
afterAll(() => home.cleanup());
const ESC = '\x1b[';

describe('colour of doctor output in a pipe', () => {
  it('no escape codes without FORCE_COLOR, and none with NO_COLOR and FORCE_COLOR both set; FORCE_COLOR alone colours', async () => {
    const base = fakeEnv(home);
    const plain = await runCli(['doctor', '--only', 'gpu.driver'], { ...base, NO_COLOR: undefined, FORCE_COLOR: undefined });
    const both = await runCli(['doctor', '--only', 'gpu.driver'], { ...base, NO_COLOR: '1', FORCE_COLOR: '1' });
    const flag = await runCli(['--no-color', 'doctor', '--only', 'gpu.driver'], { ...base, NO_COLOR: undefined, FORCE_COLOR: '1' });
    const forced = await runCli(['doctor', '--only', 'gpu.driver'], { ...base, NO_COLOR: undefined, FORCE_COLOR: '1' });
    for (const r of [plain, both, flag, forced]) expect(r.stdout).toContain('dynamo-dev doctor');
    expect(plain.stdout).not.toContain(ESC);
    expect(both.stdout).not.toContain(ESC);
    expect(flag.stdout).not.toContain(ESC);
    expect(forced.stdout).toContain(ESC);
  });
});
