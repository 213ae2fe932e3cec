import chalk from 'chalk';
import type { Writable } from 'node:stream';
import { formatDuration } from '../format-duration.js';
import type { InstallEvent } from '../host/python/installer.js';
import type { InstallProgress } from '../plan/setup-install.js';
import { FRAMES } from './up-process-row.js';
import { keepWhole, truncateWords, wrapFix, wrapWords } from './fit.js';

// `setup` for people: what it found and chose, then one line per step. On a terminal the running
// step is a spinner line rewritten in place (packages, bytes, time); piped, a line when a step
// starts and one when it ends. Lines wrap to the terminal's width; piped, each stays whole.

/** "34 packages, 120.5 MB" from what pip/uv said so far; '' before they said anything. */
export function progressText(p: InstallProgress): string {
  const parts: string[] = [];
  if (p.installed !== null) parts.push(`${p.installed} installed`);
  else if (p.installing !== null) parts.push(`installing ${p.installing}`);
  else if (p.packages > 0) parts.push(`${p.packages} package${p.packages === 1 ? '' : 's'}`);
  if (p.bytes > 0) parts.push(megabytes(p.bytes));
  else if (p.downloads > 0) parts.push(`${p.downloads} download${p.downloads === 1 ? '' : 's'}`);
  return parts.join(', ');
}

const megabytes = (b: number) => (b >= 1e9 ? `${(b / 1e9).toFixed(2)} GB` : `${(b / 1e6).toFixed(1)} MB`);

export const ok = chalk.green('✓');

export function fit(text: string, columns: number, indent = '  '): string {
  return Number.isFinite(columns) ? wrapWords(text, columns, indent).join('\n') : text;
}

/** A line naming a command to paste: wrapped, the command never broken. */
export function fitCommand(before: string, command: string, columns: number, indent = '  '): string {
  return Number.isFinite(columns) ? wrapFix(`${before}${keepWhole(command)}`, columns, indent).join('\n') : `${before}${command}`;
}

/** The one line that says the install went the other way, and why. */
export function placeholderLine(p: { name: string; version: string | null }): string {
  return `${p.name}${p.version ? ` ${p.version}` : ''} is a placeholder package that downloads from NVIDIA's index (pypi.nvidia.com), out of reach here: installing ai-dynamo with --no-deps and its other pinned requirements, without ${p.name}${p.name === 'aisimulate' ? ' (in ai-dynamo 1.6.1 only dynamo.planner imports it; the frontend, the mocker and the vLLM worker never do)' : ''}`;
}

export interface StepView {
  onEvent(e: InstallEvent): void;
  /** The running step failed or was interrupted: its line with ✗. */
  fail(): void;
  stop(): void;
}

/** Renders install events on a stream: a spinner line on a terminal (`tty`), else plain lines. */
export function createStepView(out: Writable, tty: boolean, columns: number, now: () => number = Date.now): StepView {
  let current: { label: string; index: number; of: number; t0: number; progress: InstallProgress | null } | null = null;
  let frame = 0;
  let timer: NodeJS.Timeout | null = null;
  const head = (c: NonNullable<typeof current>) => `[${c.index}/${c.of}] ${c.label}`;
  const live = () => {
    if (!current) return;
    const p = current.progress ? progressText(current.progress) : '';
    const line = `${head(current)}  ${chalk.dim([p, formatDuration(now() - current.t0)].filter(Boolean).join(', '))}`;
    out.write(`\r\x1b[2K${chalk.cyan(FRAMES[frame])} ${truncateWords(line, Math.max(10, columns - 2))}`);
  };
  const clear = () => {
    if (tty && current) out.write('\r\x1b[2K');
  };
  const stopTimer = () => {
    if (timer) clearInterval(timer);
    timer = null;
  };
  const finish = (mark: string, extra: string) => {
    if (!current) return;
    clear();
    stopTimer();
    out.write(`${fit(`${mark} ${head(current)}${extra ? `  ${extra}` : ''}`, columns, '      ')}\n`);
    current = null;
  };
  return {
    onEvent(e) {
      if (e.event === 'step') {
        current = { label: e.label, index: e.index, of: e.of, t0: now(), progress: null };
        if (tty) {
          live();
          timer = setInterval(() => {
            frame = (frame + 1) % FRAMES.length;
            live();
          }, 80);
        } else {
          out.write(`  [${e.index}/${e.of}] ${e.label} ...\n`);
        }
      } else if (e.event === 'progress' && current) {
        current.progress = e.progress;
        if (tty) live();
      } else if (e.event === 'step-done' && current) {
        const p = progressText(e.progress);
        finish(chalk.green('✓'), [p, formatDuration(e.ms)].filter(Boolean).join(', '));
      } else if (e.event === 'fallback') {
        const p = e.placeholder;
        finish(chalk.yellow('!'), `failed on ${p.name}`);
        out.write(`${fit(`  ${placeholderLine(p)}`, columns, '  ')}\n`);
      }
    },
    fail() {
      finish(chalk.red('✗'), current ? formatDuration(now() - current.t0) : '');
    },
    stop() {
      stopTimer();
      clear();
      current = null;
    },
  };
}
