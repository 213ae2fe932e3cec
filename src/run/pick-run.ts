// The rule of logs and diagnose (which-run.ts says every command's rule): --run ID, else the latest recorded run.
export { latestRun as pickRun } from './which-run.js';
