import chalk from 'chalk';
import type { CheckStatus } from '../doctor/types.js';

/** CLI.md status marks: ✓ pass, ! warn, ✗ fail, - skip. */
export const MARK: Record<CheckStatus, string> = { pass: '✓', warn: '!', fail: '✗', skip: '-' };

export function paintStatus(status: CheckStatus, text: string): string {
  switch (status) {
    case 'pass': return chalk.green(text);
    case 'warn': return chalk.yellow(text);
    case 'fail': return chalk.red(text);
    default: return chalk.dim(text);
  }
}
