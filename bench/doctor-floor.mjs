// `doctor --json` against its floor: bench/floor_check.py, a stdlib Python checker of the facts
// Dynamo's own checker (deploy/sanity_check.py) and doctor both report (nvidia-smi query, driver
// CUDA version, imports). Same fake machine, alternating pairs; wall and CPU. Issue 10 asks for this
// measurement, with no target: a floor is the least any checker could take (one Python start and
// the same calls, one after another), and `node -e 0` alone takes about as long here. The target
// (<= 1.0x wall) is against the upstream checker itself: doctor-sanity.mjs.
import { join } from 'node:path';
import { ROOT, doctorAgainst, fakeEnv } from './lib.mjs';

process.exit(doctorAgainst({
  name: 'floor_check.py', cmd: 'python3', args: [join(ROOT, 'bench', 'floor_check.py')],
  env: fakeEnv(), n: Number(process.env.DD_BENCH_PAIRS ?? 11), target: false,
}));
