// `doctor --json` against Dynamo's own checker, issue 10's anchor: `python3 $DD_BENCH_SANITY_CHECK
// --json-output`, a copy of ai-dynamo/dynamo deploy/sanity_check.py kept OUTSIDE this repository
// (skipped, exit 3, without it). Same fake machine, alternating pairs; target: doctor's median
// wall time <= the checker's while it checks far more. The checker exits 1 here (no Dynamo
// install on the fake machine); what matters is that it printed its JSON and took its full GPU
// path: a GPU node in error (a call the fake nvidia-smi does not answer) stops the bench, since
// a checker that gave up early is no anchor.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { doctorAgainst, fakeEnv } from './lib.mjs';

const SKIPPED = 3;
const script = process.env.DD_BENCH_SANITY_CHECK;
if (!script || !existsSync(script)) {
  console.log('skipped: set DD_BENCH_SANITY_CHECK to a copy of ai-dynamo/dynamo deploy/sanity_check.py (not in this repository)');
  process.exit(SKIPPED);
}

/** The checker's "NVIDIA GPU" node (its JSON is a tree of { label, desc, status, meta, children }). */
function gpuNode(node) {
  if (node.label === 'NVIDIA GPU') return node;
  for (const child of node.children ?? []) {
    const found = gpuNode(child);
    if (found) return found;
  }
  return null;
}

function acceptGpu(stdout) {
  const gpu = gpuNode(JSON.parse(stdout));
  if (gpu?.status !== 'ok' || !gpu.meta?.Power || !gpu.meta?.Memory) {
    throw new Error(`sanity_check.py did not read the fake GPU (NVIDIA GPU: ${gpu ? `${gpu.status}, ${gpu.desc}` : 'no node'}); `
      + 'test/fixtures/bin/gpu/nvidia-smi must answer its calls');
  }
}

process.exit(doctorAgainst({
  name: 'sanity_check.py', cmd: 'python3', args: [resolve(script), '--json-output'],
  env: fakeEnv(), n: Number(process.env.DD_BENCH_PAIRS ?? 11), accept: acceptGpu,
}));
