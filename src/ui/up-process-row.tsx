import { Text } from 'ink';
import { STATE_LABEL, formatElapsed, rowHint, stopAsker, type Row } from './up-state.js';
import { truncateWords } from './fit.js';

export const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const COLOR: Record<Row['state'], string> = {
  waiting: 'gray', starting: 'cyan', loading: 'cyan', 'kv-allocated': 'blue', ready: 'green', exited: 'red', failed: 'red', stopped: 'gray', gone: 'red',
};

export interface UpProcessRowProps {
  row: Row;
  nameWidth: number;
  frame: number;
  now: number;
  /** Terminal columns: the row never wraps (a wrapped live row breaks ink's redraw). */
  columns: number;
}

/** The fixed columns of a row: mark, name, state, elapsed, KV tokens, GPU fraction. Pure. */
export function rowColumns(row: Row, nameWidth: number, now: number): string {
  const kv = row.kvTokens !== null ? `KV ${row.kvTokens.toLocaleString('en-US')}` : '';
  const gpu = row.fraction !== null ? String(row.fraction) : '';
  const never = row.pid === null;
  const elapsed = never ? '' : formatElapsed((row.doneAt ?? now) - row.since);
  const label = never && row.state === 'stopped' ? 'not started' : STATE_LABEL[row.state];
  return `${row.name.padEnd(nameWidth)} ${label.padEnd(12)} ${elapsed.padStart(6)}  ${kv.padEnd(10)} ${gpu.padEnd(4)}`;
}

/** One process: mark, fixed columns, then its last log message or, in yellow, what is wrong. */
export function UpProcessRow({ row, nameWidth, frame, now, columns }: UpProcessRowProps) {
  const busy = row.state === 'starting' || row.state === 'loading' || row.state === 'kv-allocated';
  const hint = rowHint(row, now);
  const mark = row.state === 'ready' ? (hint ? '!' : '✓') : row.state === 'failed' || row.state === 'exited' ? '✗' : busy ? FRAMES[frame % FRAMES.length] : '·';
  const cols = rowColumns(row, nameWidth, now);
  const room = Math.max(0, columns - 2 - cols.length - 2);
  const color = hint && row.state !== 'failed' ? 'yellow' : COLOR[row.state];
  return (
    <Text wrap="truncate-end">
      <Text color={color}>{mark} </Text>
      <Text bold={!hint} color={hint ? 'yellow' : undefined}>{cols}</Text>
      {hint
        ? <Text color="yellow">  {truncateWords(hint, room)}</Text>
        : <Text dimColor>  {truncateWords(row.lastLine, room)}</Text>}
    </Text>
  );
}

/** A row while stopping: what was sent, and the countdown to SIGKILL. */
export function StopRow({ row, nameWidth, frame, now, killAt, columns }: Omit<UpProcessRowProps, 'row'> & { row: Row; killAt: number }) {
  const s = row.stop;
  const name = row.name.padEnd(nameWidth);
  let text: string;
  let mark: string;
  let color: string;
  if (!s) {
    mark = '·';
    color = 'gray';
    text = row.pid === null ? `${name} not started` : `${name} ${row.state}`;
  } else if (s.phase === 'done' && s.signal === null && (row.state === 'failed' || row.state === 'exited')) {
    // It ended on its own before the stop (the cause of a failed run): not a clean stop.
    mark = '✗';
    color = 'red';
    text = `${name} had already exited`;
  } else if (s.phase === 'done') {
    const survived = s.note?.includes('survived') ?? false;
    mark = survived ? '✗' : '✓';
    color = survived ? 'red' : s.signal === 'SIGKILL' ? 'yellow' : 'green';
    text = survived ? `${name} survived SIGKILL: ${s.note}`
      : `${name} stopped (${s.signal ?? 'no signal needed'}${s.signal !== 'SIGKILL' ? '' : s.forced ? ` at ${stopAsker(s.forcedBy)}` : ': it ignored SIGTERM'})`;
  } else if (s.phase === 'killing') {
    mark = FRAMES[frame % FRAMES.length];
    color = 'red';
    text = `${name} SIGKILL sent, waiting for pid ${s.alive.join(', ') || s.pid} to vanish`;
  } else {
    mark = FRAMES[frame % FRAMES.length];
    color = 'yellow';
    const left = Math.max(0, Math.ceil((killAt - now) / 1000));
    text = `${name} SIGTERM sent; SIGKILL in ${left}s${s.alive.length > 1 ? ` (${s.alive.length} processes left)` : ''}`;
  }
  return (
    <Text wrap="truncate-end">
      <Text color={color}>{mark} </Text>
      <Text>{truncateWords(text, Math.max(10, columns - 2))}</Text>
    </Text>
  );
}
