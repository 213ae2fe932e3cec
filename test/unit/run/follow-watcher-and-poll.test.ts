import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventEmitter } from 'node:events';
import { appendFileSync, readdirSync } from 'node:fs';
import { logFiles } from '../../helpers/log-files.js';
import { MAX_LINE } from '../../../src/run/log-read.js';
import { followFile, type Follower } from '../../../src/run/follow.js';

// up's live view follows each log for as long as the run lives (hours when watched): one open file
// and one watcher however often it reads, the poll at the interval asked for when fs.watch is
// missing or fails, a listener that stops it hears nothing more, and the last partial line as it
// was written.

const fsw = vi.hoisted(() => ({ watch: null as null | ((...a: unknown[]) => unknown) }));
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const watch = (...a: unknown[]) => (fsw.watch ? fsw.watch(...a) : (real.watch as (...x: unknown[]) => unknown)(...a));
  return { ...real, default: { ...real, watch }, watch };
});

const { file } = logFiles('dd-follow-');
const followers: Follower[] = [];
afterEach(() => {
  followers.splice(0).forEach((f) => f.stop());
  fsw.watch = null;
  vi.useRealTimers();
});
function follow(path: string, opts: { pollMs?: number } = {}, onLine?: (l: string, f: Follower) => void) {
  const lines: string[] = [];
  let f: Follower | null = null;
  f = followFile(path, (l) => {
    lines.push(l);
    onLine?.(l, f!);
  }, opts);
  followers.push(f);
  return { f, lines };
}
const openFds = () => readdirSync('/proc/self/fd').length;

describe('one open file and one watcher for the life of a follower', () => {
  it('reading again and again opens nothing more', () => {
    const path = file('a\n');
    const { f, lines } = follow(path, { pollMs: 60_000 });
    const fds = openFds();
    for (let i = 0; i < 5; i++) {
      appendFileSync(path, `${i}\n`);
      f.drain();
    }
    expect(lines).toEqual(['a', '0', '1', '2', '3', '4']);
    expect(openFds()).toBe(fds);
  });
});

describe('without a working fs.watch the poll carries on, at the interval asked for', () => {
  it('fs.watch refused (no inotify): lines come at each poll, not before', () => {
    fsw.watch = () => {
      throw Object.assign(new Error('ENOSPC: System limit for number of file watchers reached'), { code: 'ENOSPC' });
    };
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const path = file('');
    const { lines } = follow(path, { pollMs: 1000 });
    appendFileSync(path, 'late\n');
    vi.advanceTimersByTime(999);
    expect(lines).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(lines).toEqual(['late']);
  });

  it('a watcher that fails is closed at once; the follower goes on by polling', () => {
    const fake = Object.assign(new EventEmitter(), { closed: 0, close() { this.closed++; } });
    fsw.watch = () => fake;
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const path = file('');
    const { f, lines } = follow(path, { pollMs: 500 });
    fake.emit('error', new Error('EMFILE: too many open files, watch'));
    expect(fake.closed).toBe(1);
    appendFileSync(path, 'still here\n');
    vi.advanceTimersByTime(500);
    expect(lines).toEqual(['still here']);
    f.stop();
    expect(fake.closed).toBe(1);
  });
});

describe('a listener that stops the follower', () => {
  it('in the middle of a long line that did end: no further piece of it', () => {
    // Written once the follower exists, so the listener can stop it (during followFile() it cannot).
    const path = file('');
    const { f, lines } = follow(path, { pollMs: 60_000 }, (_l, self) => self.stop());
    appendFileSync(path, `${'x'.repeat(MAX_LINE)}yz\nnext\n`);
    f.drain();
    expect(lines.map((l) => l.length)).toEqual([MAX_LINE]);
  });
});

describe('what stop() delivers last', () => {
  it('a final partial line keeps a carriage return inside it (a progress bar redrawn)', () => {
    const { f, lines } = follow(file('done\n10%\r20%'));
    f.stop();
    expect(lines).toEqual(['done', '10%\r20%']);
  });

  it('a log that ended with its newline: no empty line after it', () => {
    const { f, lines } = follow(file('one\ntwo\n'));
    f.stop();
    expect(lines).toEqual(['one', 'two']);
  });
});
