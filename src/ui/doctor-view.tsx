import chalk from 'chalk';
import { Box, Static, Text, render } from 'ink';
import { useEffect, useState } from 'react';
import type { CheckOutcome } from '../doctor/types.js';
import { MARK, paintStatus } from './marks.js';
import { formatOutcome } from './doctor-report.js';
import { visibleLength } from './fit.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface DoctorViewProps {
  titles: string[];
  /** Subscribes to settled checks; returns an unsubscribe. */
  subscribe: (on: (o: CheckOutcome, i: number) => void) => () => void;
  /** Terminal height; the live part stays below it (undefined: no limit). */
  rows?: number;
  /** Terminal width: finished results wrap at word boundaries to it. */
  columns?: number;
}

/**
 * Live list in two parts. Results print once, in declared order, as soon as every earlier check
 * has settled (ink's <Static>: written above the live part and never redrawn, so a long report
 * scrolls like plain output). Below, one line per check still to print: a spinner, or the mark
 * and summary of a check that settled early. ink clears the whole terminal, scrollback included,
 * on every frame once the live part is as tall as the terminal; keeping it to one truncated line
 * per check, and under `rows`, prevents that.
 */
export function DoctorView({ titles, subscribe, rows, columns }: DoctorViewProps) {
  const [done, setDone] = useState<(CheckOutcome | null)[]>(() => titles.map(() => null));
  const [frame, setFrame] = useState(0);
  useEffect(() => subscribe((o, i) => setDone((d) => d.map((x, j) => (j === i ? o : x)))), [subscribe]);
  useEffect(() => {
    const t = setInterval(() => setFrame((f) => (f + 1) % FRAMES.length), 80);
    return () => clearInterval(t);
  }, []);
  const width = Math.max(...titles.map((t) => t.length));
  const firstPending = done.findIndex((o) => o === null);
  const printed = (firstPending < 0 ? done : done.slice(0, firstPending)) as CheckOutcome[];
  const pending = titles.map((title, i) => ({ title, i, o: done[i] })).slice(printed.length);
  // Room for the live lines: under the terminal's height, with one line for "... more".
  const room = rows === undefined ? Infinity : Math.max(1, rows - 2);
  const shown = pending.length > room ? pending.slice(0, Math.max(0, room - 1)) : pending;
  const hidden = pending.length - shown.length;
  return (
    <>
      <Static items={printed}>
        {(o, i) => {
          const text = formatOutcome(o, width, columns).replace(/\n$/, '');
          // formatOutcome already fit the prose to the width. A line wider than that is a command or
          // path kept whole on purpose: a box as wide as it stops ink from breaking it with a newline
          // (the terminal soft-wraps it; a copied command stays one line).
          return (
            <Box key={`${i}-${o.id}`} width={Math.max(1, ...text.split('\n').map(visibleLength))}>
              <Text>{text}</Text>
            </Box>
          );
        }}
      </Static>
      <Box flexDirection="column">
        {shown.map(({ title, i, o }) => (
          <Text key={i} wrap="truncate-end">
            {o
              ? `${paintStatus(o.status, MARK[o.status])} ${chalk.bold(title.padEnd(width))}  ${o.summary}`
              : <><Text color="cyan">{FRAMES[frame]}</Text> <Text bold>{title.padEnd(width)}</Text>  <Text dimColor>checking…</Text></>}
          </Text>
        ))}
        {hidden > 0 ? <Text dimColor>{`… ${hidden} more`}</Text> : null}
      </Box>
    </>
  );
}

/** Mounts the view; resolves to a function that unmounts it once the last result is drawn. */
export function mountDoctorView(props: Omit<DoctorViewProps, 'rows' | 'columns'>, stdout: NodeJS.WriteStream): { finish: () => Promise<void> } {
  const app = render(<DoctorView {...props} rows={stdout.rows || undefined} columns={stdout.columns || undefined} />, { stdout, exitOnCtrlC: true, patchConsole: false });
  return {
    finish: async () => {
      // Let the final state paint before unmounting so the last line is not a spinner.
      await new Promise((r) => setImmediate(r));
      app.unmount();
      await app.waitUntilExit();
    },
  };
}
