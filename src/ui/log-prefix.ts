import chalk from 'chalk';

// Line formatting for `logs`: the process name as a coloured, aligned prefix (like docker compose),
// or NDJSON records with --json. The line itself is never changed. Colours follow chalk (the CLI
// turns them off for --no-color / NO_COLOR; a pipe gets none).

const PALETTE = ['cyan', 'magenta', 'yellow', 'green', 'blue', 'red'] as const;

export function linePrefixer(
  names: string[],
  o: { prefixed: boolean; json: boolean },
): (name: string, line: string) => string {
  if (o.json) return (name, line) => `${JSON.stringify({ process: name, line })}\n`;
  if (!o.prefixed) return (_name, line) => `${line}\n`;
  const width = Math.max(0, ...names.map((n) => n.length));
  const prefix = new Map(names.map((n, i) => [n, `${chalk[PALETTE[i % PALETTE.length]](n.padEnd(width))} | `]));
  return (name, line) => `${prefix.get(name) ?? `${name.padEnd(width)} | `}${line}\n`;
}
