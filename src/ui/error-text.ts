// What a failed command prints on stderr (pure). Piped: one whole line for the error and one for its
// fix, so scripts can grep them. On a terminal both wrap at word boundaries to its width like every
// other report (the terminal cut them mid-word at column 80, e.g. inside a flag's name); the fix keeps
// a flag with its value and a `quoted command` on one line, so a copied fix still runs.
import { wrapFix, wrapWords } from './fit.js';

const INDENT = '  ';

/** `dynamo-dev: MESSAGE` and, when given, `fix: FIX`, each wrapped to `columns` (Infinity: whole). */
export function formatCommandError(message: string, fix: string | undefined, columns = Infinity): string {
  const lines = wrapWords(`dynamo-dev: ${message}`, columns, INDENT);
  if (fix) lines.push(...wrapFix(`fix: ${fix}`, columns, INDENT));
  return `${lines.join('\n')}\n`;
}

/** A finished error line (commander's, in the tool's style) wrapped to `columns`. */
export function fitErrorLine(line: string, columns = Infinity): string {
  return `${wrapFix(line.trimEnd(), columns, INDENT).join('\n')}\n`;
}

/** The width to wrap stderr at: the terminal's, or Infinity when stderr is not a terminal. */
export function stderrColumns(stderr: { isTTY?: boolean; columns?: number }): number {
  return stderr.isTTY && stderr.columns ? stderr.columns : Infinity;
}
