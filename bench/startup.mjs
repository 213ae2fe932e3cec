// `dynamo-dev --version` must stay within 1.5x of `node -e 0` (lazy imports keep start-up cheap).
import { BIN, median, report, timeRun } from './lib.mjs';

const N = 15;
const nodeMs = [];
const versionMs = [];
const helpMs = [];
for (let i = 0; i < N; i++) {
  nodeMs.push(timeRun(process.execPath, ['-e', '0']).ms);
  versionMs.push(timeRun(process.execPath, [BIN, '--version']).ms);
  helpMs.push(timeRun(process.execPath, [BIN, '--help']).ms);
}
const ratio = median(versionMs) / median(nodeMs);
report([
  ['node -e 0 (median)', `${median(nodeMs).toFixed(1)} ms`],
  ['dynamo-dev --version (median)', `${median(versionMs).toFixed(1)} ms`],
  ['dynamo-dev --help (median)', `${median(helpMs).toFixed(1)} ms`],
  ['ratio --version / node', `${ratio.toFixed(2)}x (target <= 1.5x)`],
]);
process.exit(ratio <= 1.5 ? 0 : 1);
