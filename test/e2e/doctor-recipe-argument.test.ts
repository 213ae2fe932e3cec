import { expect, it } from 'vitest';
import { fakeEnv, runCli, tempHomes } from '../helpers/cli.js';

// `doctor mocker`, typed as `up mocker` is: it was "too many arguments ... Expected 0 arguments
// but got 1". The recipe as an argument is --recipe; both, naming two recipes, is refused.
const home = tempHomes('dd-doctor-arg-');

it('doctor RECIPE judges that recipe, as --recipe RECIPE does; both naming two recipes: exit 2, one line', async () => {
  const env = fakeEnv(home());
  const byArg = await runCli(['doctor', 'disagg-same-gpu', '--only', 'ports.free', '--json'], env);
  const byOption = await runCli(['doctor', '--recipe', 'disagg-same-gpu', '--only', 'ports.free', '--json'], env);
  const ports = (r: { stdout: string }) => (JSON.parse(r.stdout).checks[0].evidence.ports as { name: string }[]).map((p) => p.name);
  expect(ports(byArg)).toEqual(ports(byOption));
  // disagg's plan: a prefill and a decode worker, not agg's default.
  expect(ports(byArg).some((n) => n.startsWith('prefill'))).toBe(true);
  const twice = await runCli(['doctor', 'disagg-same-gpu', '--recipe', 'agg'], env);
  expect([twice.code, twice.stdout, twice.stderr]).toEqual([2, '', 'dynamo-dev: the recipe is given twice: disagg-same-gpu and --recipe agg; give it once']);
  const same = await runCli(['doctor', 'disagg-same-gpu', '--recipe', 'disagg-same-gpu', '--only', 'ports.free', '--json'], env);
  expect(ports(same)).toEqual(ports(byOption));
});
