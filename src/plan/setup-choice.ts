import { SUPPORTED_BELOW, SUPPORTED_MIN, VERIFIED, versionSupport } from './dynamo-releases.js';
import type { SetupEngine } from './setup-install.js';

// Which release and engine `dynamo-dev setup` installs (pure). The mocker engine needs Dynamo
// alone (no torch, no vLLM, no CUDA): any release the plans support runs it, so it is chosen here.
// The vLLM engine needs a vLLM/torch build this driver and GPU can run: that choice belongs to the
// release table's build facts (plan/dynamo-releases.ts, issue 24); until they are there, setup
// says it cannot choose one rather than guess.

export interface MachineGpu {
  driverVersion: string | null;
  /** The newest CUDA the driver accepts ("13.0"). */
  cudaVersion: string | null;
  /** Of each GPU, "8.6"; empty when nvidia-smi does not report it. */
  computeCaps: string[];
}

export interface SetupRequest {
  release?: string;
  engine?: SetupEngine;
}

export type SetupChoice =
  | { ok: true; release: string; engine: SetupEngine; reasons: string[] }
  | { ok: false; reasons: string[]; wouldFit: string[] };

/** The vLLM chooser's shape: the release table's answer for a GPU machine. */
export type VllmChooser = (gpu: MachineGpu, release: string | undefined) => SetupChoice;

/** Known releases, for messages: the first release of each table entry from SUPPORTED_MIN on. */
const known = () => `releases from ${SUPPORTED_MIN} up to (not including) ${SUPPORTED_BELOW}; ${VERIFIED} is the one our tests run`;

export function chooseSetup(gpu: MachineGpu | null, req: SetupRequest, vllm: VllmChooser | null): SetupChoice {
  if (req.release !== undefined) {
    const support = versionSupport(req.release);
    if (support === 'too-old' || support === 'newer') {
      return {
        ok: false,
        reasons: [`--release ${req.release} is ${support === 'too-old' ? 'older than the plans support' : 'newer than the release table knows'}`],
        wouldFit: [`--release ${VERIFIED}`, known()],
      };
    }
  }
  const engine: SetupEngine = req.engine ?? (gpu ? 'vllm' : 'mocker');
  if (engine === 'vllm') {
    if (!gpu) {
      return { ok: false, reasons: ['no NVIDIA GPU here (nvidia-smi lists none), and vLLM needs one'], wouldFit: ['--engine mocker (Dynamo alone; `dynamo-dev up mocker` runs on the CPU)'] };
    }
    if (!vllm) {
      return {
        ok: false,
        reasons: [`this version of dynamo-dev cannot yet choose a vLLM build for driver ${gpu.driverVersion ?? 'unknown'} (the release table has no build facts yet)`],
        wouldFit: ['--engine mocker', `install ai-dynamo[vllm] yourself and pass --python (or set DYNAMO_DEV_PYTHON)`],
      };
    }
    return vllm(gpu, req.release);
  }
  const release = req.release ?? VERIFIED;
  const reasons = [
    gpu ? 'the mocker engine, as asked: Dynamo alone, no vLLM or torch' : 'no NVIDIA GPU here: Dynamo alone, for the mocker engine (no vLLM, no torch)',
    req.release ? `release ${release}, as asked` : `release ${release}, the newest our real-Dynamo tests run`,
  ];
  return { ok: true, release, engine, reasons };
}

