import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { AIPERF_PIN_FILE, MATRIX, PIN_FILE, ensureVenv, makeModel } from './venv.mjs';

// Once per `npm run test:dynamo`: the cached venv with the released Dynamo (built on first use),
// and a tiny model folder built now, offline: as a local folder, and as the Hugging Face cache
// entry of the model the built-in recipes name, so `up mocker` runs unchanged with HF_HUB_OFFLINE=1.

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoPython: string;
    /** The tiny model as a local folder. */
    modelDir: string;
    /** HF_HUB_CACHE in which Qwen/Qwen3-0.6B is the tiny model. */
    hubCache: string;
    /** A folder with an `aiperf` program (the pinned AIPerf of test/dynamo/aiperf-requirements.txt) to put on PATH. */
    aiperfBin: string;
    /**
     * The older releases of the matrix (venv.mjs MATRIX without the default pin), each with its
     * venv's interpreter: release-matrix.test.ts runs the core cases on them.
     */
    olderReleases: { release: string; python: string }[];
  }
}

export const HUB_MODEL = 'Qwen/Qwen3-0.6B';

export default function setup(project: TestProject): () => void {
  const { python } = ensureVenv();
  const root = mkdtempSync(join(tmpdir(), 'dd-dynamo-'));
  const hubCache = join(root, 'hf', 'hub');
  const model = makeModel(python, join(root, 'tiny'), { cache: hubCache, repoId: HUB_MODEL });
  project.provide('dynamoPython', python);
  project.provide('modelDir', model.folder);
  project.provide('hubCache', hubCache);
  // One cached venv per release of the matrix (its own pin file, so its own hash).
  project.provide('olderReleases', MATRIX.filter((m) => m.pinFile !== PIN_FILE).map((m) => ({
    release: m.release,
    python: ensureVenv({ pinFile: m.pinFile, label: `test:dynamo (${m.release})` }).python,
  })));
  // AIPerf in its own venv (its pins differ from Dynamo's: venv.mjs). The venv was built in a
  // temporary folder and renamed, so its own console script names a path that is gone: an `aiperf`
  // whose first line is the venv's interpreter, as pip writes one.
  const aiperf = ensureVenv({ pinFile: AIPERF_PIN_FILE, label: 'test:dynamo (aiperf)', importCheck: ['aiperf.cli'] });
  const aiperfBin = join(root, 'aiperf-bin');
  mkdirSync(aiperfBin);
  writeFileSync(join(aiperfBin, 'aiperf'), `#!${aiperf.python}\nimport sys\nfrom aiperf.cli import app\nsys.exit(app())\n`);
  chmodSync(join(aiperfBin, 'aiperf'), 0o755);
  project.provide('aiperfBin', aiperfBin);
  return () => rmSync(root, { recursive: true, force: true });
}
