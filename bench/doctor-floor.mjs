// `doctor --json` against its floor: bench/floor_check.py, a stdlib Python checker of the facts
// Dynamo's own checker (deploy/sanity_check.py) and doctor both report (nvidia-smi query, driver
// CUDA version, imports). Same fake machine, alternating pairs. Target: doctor's median wall time
// <= the floor's (ratio <= 1.0x) while it checks far more; CPU is reported beside it. Stricter
// than issue 10's anchor (the upstream checker itself: doctor-sanity.mjs), which does more work.
import { join } from 'node:path';
import { ROOT, doctorAgainst, fakeEnv } from './lib.mjs';

process.exit(doctorAgainst({
  name: 'floor_check.py', cmd: 'python3', args: [join(ROOT, 'bench', 'floor_check.py')],
  env: fakeEnv(), n: Number(process.env.DD_BENCH_PAIRS ?? 11),
}));
