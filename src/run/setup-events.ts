import type { BasePython, InstallEvent } from '../host/python/installer.js';
import type { EnvMarker, Installer, SetupEngine } from '../plan/setup-install.js';

// What `dynamo-dev setup` (run/setup.ts runSetup) tells as it goes, in order. The terminal text
// (ui/setup-text.ts) and the NDJSON of --json (ui/setup-ndjson.ts, CLI.md's event names) are both
// made from these; some are said in one of them only (`ready` is the terminal's block before
// AIPerf, the result line of --json comes after it).

/** The GPUs as setup reports them: what the choice used, and each GPU's name. */
export interface SetupGpus {
  driverVersion: string | null;
  cudaVersion: string | null;
  computeCaps: string[];
  gpus: { index: number; name: string; computeCap: string | null }[];
}

/** The vLLM/torch build a release brings, as reported. */
export interface SetupBuild { vllm: string; torch: string; nixl: string; cuda: string; minDriver: string; archs: string }

/** One command of the plan: `command` is `argv` as a line to paste. */
export interface PlannedCommand { id: string; label?: string; argv: string[]; command: string }

/** The environment made or found complete. */
export interface SetupMade {
  already: boolean;
  marker: EnvMarker;
  /** Its interpreter. */
  python: string;
  dir: string;
  log: string;
  /** Since setup started, when it was ready (before AIPerf). */
  elapsedMs: number;
}

/** AIPerf's environment, for bench, in a --dry-run: found, not for this Python, or what would build it. */
export type AiperfPlan =
  | { state: 'ready'; dir: string; version: string }
  | { state: 'python-too-old'; python: BasePython }
  | { state: 'would-install'; dir: string; version: string; commands: string[] };

export type SetupEvent =
  | { event: 'machine'; gpu: SetupGpus | null; noGpu: string | null }
  | { event: 'python'; found: BasePython | null; tried: string[] }
  /** No release fits (exit 2); `flag`: the flag whose wish this machine cannot meet, `release` the one asked. */
  | { event: 'no-fit'; flag: string | null; release: string | undefined; reasons: string[]; wouldFit: string[]; durationMs: number }
  | { event: 'choice'; release: string; engine: SetupEngine; device: 'gpu' | 'cpu'; reasons: string[]; dir: string; build: SetupBuild | null; computeCap: string | null }
  /** Nothing to make it from (exit 1). */
  | { event: 'no-python'; cause: string; durationMs: number }
  /** --dry-run: what setup would run; `existing` when the folder is already set up. */
  | {
    event: 'plan'; release: string; engine: SetupEngine; dir: string; installer: Installer; python: BasePython; uv: string | null;
    existing: { release: string; engine: SetupEngine } | null; steps: PlannedCommand[];
    fallback: { placeholder: string; when: string; steps: PlannedCommand[] } | null; aiperf: AiperfPlan; durationMs: number;
  }
  /** Another setup builds the folder, or an earlier one's installer still writes into it (exit 1). */
  | { event: 'busy'; cause: string; fix: string; lock: string; durationMs: number }
  /** The build starts: `again` when an earlier setup did not complete it. */
  | { event: 'tools'; python: BasePython; installer: Installer; uv: string | null; dir: string; again: boolean }
  | { event: 'install'; install: InstallEvent }
  | { event: 'failed'; code: number; interrupted: boolean; cause: string; step: string | null; tail: string[]; log: string; dir: string; durationMs: number }
  | { event: 'ready'; made: SetupMade }
  /** AIPerf's environment: found, made, or not (setup still succeeds for Dynamo; a failed install exits 1). */
  | { event: 'aiperf'; ok: true; alreadyComplete: boolean; dir: string; python: string; version: string }
  /** Not installed: no Python that runs it (said, setup succeeds), or its install failed (`log`). */
  | { event: 'aiperf'; ok: false; cause: string }
  | { event: 'aiperf'; ok: false; cause: string; tail: string[]; log: string }
  | { event: 'aiperf-installing'; dir: string; version: string }
  | { event: 'aiperf-step'; label: string }
  | { event: 'aiperf-busy'; dir: string; heldBy: number | null; installerLeft: number | null }
  /** The end of a setup that made or found its environment: the command that runs it next. */
  | { event: 'done'; made: SetupMade; next: string; durationMs: number };

/** What the steps of one setup (run/setup.ts and its parts) share. */
export interface SetupScope {
  env: NodeJS.ProcessEnv;
  emit: (e: SetupEvent) => void;
  /** Milliseconds since the command started. */
  since: () => number;
  /** The folder of setup's environments (AIPerf's among them). */
  envsRoot: string;
}
