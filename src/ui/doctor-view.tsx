import { Box, Text, render } from 'ink';
import { useEffect, useState } from 'react';
import type { CheckOutcome } from '../doctor/types.js';
import { formatOutcome } from './doctor-report.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface DoctorViewProps {
  titles: string[];
  /** Subscribes to settled checks; returns an unsubscribe. */
  subscribe: (on: (o: CheckOutcome, i: number) => void) => () => void;
}

/** Live list: a spinner per running check, each replaced by its result as it settles. */
export function DoctorView({ titles, subscribe }: DoctorViewProps) {
  const [done, setDone] = useState<(CheckOutcome | null)[]>(() => titles.map(() => null));
  const [frame, setFrame] = useState(0);
  useEffect(() => subscribe((o, i) => setDone((d) => d.map((x, j) => (j === i ? o : x)))), [subscribe]);
  useEffect(() => {
    const t = setInterval(() => setFrame((f) => (f + 1) % FRAMES.length), 80);
    return () => clearInterval(t);
  }, []);
  const width = Math.max(...titles.map((t) => t.length));
  return (
    <Box flexDirection="column">
      {titles.map((title, i) => {
        const o = done[i];
        if (o) return <Text key={title}>{formatOutcome(o, width).replace(/\n$/, '')}</Text>;
        return (
          <Text key={title}>
            <Text color="cyan">{FRAMES[frame]}</Text> <Text bold>{title.padEnd(width)}</Text>  <Text dimColor>checking…</Text>
          </Text>
        );
      })}
    </Box>
  );
}

/** Mounts the view; resolves to a function that unmounts it once the last result is drawn. */
export function mountDoctorView(props: DoctorViewProps, stdout: NodeJS.WriteStream): { finish: () => Promise<void> } {
  const app = render(<DoctorView {...props} />, { stdout, exitOnCtrlC: true, patchConsole: false });
  return {
    finish: async () => {
      // Let the final state paint before unmounting so the last line is not a spinner.
      await new Promise((r) => setImmediate(r));
      app.unmount();
      await app.waitUntilExit();
    },
  };
}
