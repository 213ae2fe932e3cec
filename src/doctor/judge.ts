// What run/ may use of doctor, in one module: the facts of a run or a plan gathered, the checks
// chosen and run over them (up's preflight, bench's gates). run/ sits below doctor/ in the layers
// (ARCHITECTURE.md); this is its one door upward, so the import-graph test can name it.

export { createFacts, type FactsOptions } from './facts.js';
export { runChecks } from './runner.js';
export { preflightIds, selectChecks } from './registry.js';
export { judgeModelSource, modelFailureLine } from './checks/model.available.js';
export { portsBeside } from './ports-beside.js';
export type { CheckOutcome } from './types.js';
