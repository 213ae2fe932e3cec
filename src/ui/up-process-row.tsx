import { Box, Text } from 'ink';
import { STATE_LABEL, formatElapsed, type Row } from './up-state.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const COLOR: Record<Row['state'], string> = {
  waiting: 'gray', starting: 'cyan', loading: 'cyan', 'kv-allocated': 'blue', ready: 'green', exited: 'red', failed: 'red', stopped: 'gray',
};

export interface UpProcessRowProps {
  row: Row;
  nameWidth: number;
  frame: number;
  now: number;
  /** Columns left for the last log line. */
  lineWidth: number;
}

/** One process: mark, name, state, elapsed, KV tokens, GPU fraction, last log line. */
export function UpProcessRow({ row, nameWidth, frame, now, lineWidth }: UpProcessRowProps) {
  const busy = row.state === 'starting' || row.state === 'loading' || row.state === 'kv-allocated';
  const mark = row.state === 'ready' ? '✓' : row.state === 'failed' || row.state === 'exited' ? '✗' : busy ? FRAMES[frame % FRAMES.length] : '·';
  const kv = row.kvTokens !== null ? `KV ${row.kvTokens.toLocaleString('en-US')}` : '';
  const gpu = row.fraction !== null ? `gpu ${row.fraction}` : '';
  const line = row.lastLine.length > lineWidth ? `${row.lastLine.slice(0, Math.max(0, lineWidth - 1))}…` : row.lastLine;
  return (
    <Box>
      <Text color={COLOR[row.state]}>{mark} </Text>
      <Text bold>{row.name.padEnd(nameWidth)}</Text>
      <Text color={COLOR[row.state]}> {STATE_LABEL[row.state].padEnd(12)}</Text>
      <Text dimColor> {(row.state === 'waiting' ? '' : formatElapsed((row.doneAt ?? now) - row.since)).padStart(6)}</Text>
      <Text> {kv.padEnd(10)} {gpu.padEnd(8)}</Text>
      <Text dimColor> {line}</Text>
    </Box>
  );
}
