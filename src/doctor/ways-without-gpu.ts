// The two ways to run on a machine without a GPU, with what each costs and its exact commands.
// doctor's header on such a machine and gpu.driver's failure say the same words from here.
// Costs measured on a 2-core, 24 GiB machine (docs/cpu.md "Cost"; the mocker's environment,
// ai-dynamo 1.6.1 alone, is ~0.7 GB on disk; its workers are ready in seconds).

export interface WayToRun {
  /** What it is, as a user picks between them. */
  name: string;
  /** What it runs and costs. */
  cost: string;
  /** The commands, in order, each as typed. */
  commands: string[];
}

export const MOCKER_WAY: WayToRun = {
  name: 'the mocker',
  cost: 'Dynamo\'s simulated workers, ready in seconds, ~0.7 GB install',
  commands: ['dynamo-dev setup', 'dynamo-dev up mocker'],
};

export const CPU_ENGINE_WAY: WayToRun = {
  name: 'the CPU engine',
  cost: 'real vLLM workers, ~2 min to ready, ~6.2 GB install',
  commands: ['dynamo-dev setup --device cpu', 'dynamo-dev up agg-router --device cpu'],
};

/** How doctor judges the CPU engine's recipe instead of the mocker's. */
export const JUDGE_CPU_ENGINE = 'dynamo-dev doctor agg-router --device cpu';

/** One way as a sentence (a check's detail line): its name, cost and commands. */
export const wayText = (w: WayToRun): string => `${w.name} (${w.cost}): ${w.commands.map((c) => `\`${c}\``).join(' then ')}`;
