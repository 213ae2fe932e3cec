import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, readFileSync, readSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempHomes } from '../../helpers/cli.js';
import { realSupervisorDeps } from '../../../src/run/supervisor-deps.js';

// The supervisor's marks in a process log (a restart, a stop): each on a line of its own, whatever
// the process left mid-line; the size after is where what comes next starts. Never into a FIFO or
// through a link (src/run/supervisor-deps.ts appendLine).

const home = tempHomes('dd-append-log-');
const appendLog = realSupervisorDeps().appendLog;

describe('appendLog: a supervisor mark on a line of its own', () => {
  it('no log yet: the line starts it; the size after is the line and its newline', () => {
    const path = join(home().dir, 'agg-0.log');
    expect(appendLog(path, 'restarted')).toBe('restarted\n'.length);
    expect(readFileSync(path, 'utf8')).toBe('restarted\n');
  });

  it('an empty log: no newline before the line', () => {
    const path = join(home().dir, 'agg-0.log');
    writeFileSync(path, '');
    expect(appendLog(path, 'mark')).toBe(5);
    expect(readFileSync(path, 'utf8')).toBe('mark\n');
  });

  it('a log ending with a newline: the line follows directly', () => {
    const path = join(home().dir, 'agg-0.log');
    writeFileSync(path, 'INFO one\n');
    expect(appendLog(path, 'mark')).toBe('INFO one\nmark\n'.length);
    expect(readFileSync(path, 'utf8')).toBe('INFO one\nmark\n');
  });

  it('a log ending mid-line (a progress bar): a newline first, so the mark is a line of its own', () => {
    const path = join(home().dir, 'agg-0.log');
    writeFileSync(path, 'INFO one\nLoading 45%');
    expect(appendLog(path, 'mark')).toBe('INFO one\nLoading 45%\nmark\n'.length);
    expect(readFileSync(path, 'utf8')).toBe('INFO one\nLoading 45%\nmark\n');
    // And the next mark, after ours, needs none.
    appendLog(path, 'again');
    expect(readFileSync(path, 'utf8')).toBe('INFO one\nLoading 45%\nmark\nagain\n');
  });

  it('a one-byte log that is a newline, and one that is not', () => {
    const dir = home().dir;
    writeFileSync(join(dir, 'nl.log'), '\n');
    writeFileSync(join(dir, 'x.log'), 'x');
    appendLog(join(dir, 'nl.log'), 'm');
    appendLog(join(dir, 'x.log'), 'm');
    expect(readFileSync(join(dir, 'nl.log'), 'utf8')).toBe('\nm\n');
    expect(readFileSync(join(dir, 'x.log'), 'utf8')).toBe('x\nm\n');
  });

  it('a link where the log was: 0, and the file it points to is untouched', () => {
    const dir = home().dir;
    writeFileSync(join(dir, 'target'), 'not ours\n');
    symlinkSync(join(dir, 'target'), join(dir, 'agg-0.log'));
    expect(appendLog(join(dir, 'agg-0.log'), 'mark')).toBe(0);
    expect(readFileSync(join(dir, 'target'), 'utf8')).toBe('not ours\n');
  });

  it('a directory where the log was: 0', () => {
    const path = join(home().dir, 'agg-0.log');
    mkdirSync(path);
    expect(appendLog(path, 'mark')).toBe(0);
  });

  it('a FIFO where the log was, with nobody reading: 0 at once, nothing blocks', () => {
    const path = join(home().dir, 'agg-0.log');
    expect(spawnSync('mkfifo', [path]).status).toBe(0);
    expect(appendLog(path, 'mark')).toBe(0);
  });

  it('a FIFO where the log was, with a reader: 0, and the reader gets nothing', () => {
    const path = join(home().dir, 'agg-0.log');
    expect(spawnSync('mkfifo', [path]).status).toBe(0);
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      expect(appendLog(path, 'mark')).toBe(0);
      const b = Buffer.alloc(64);
      let n = 0;
      try {
        n = readSync(reader, b, 0, 64, null);
      } catch (e) {
        expect((e as NodeJS.ErrnoException).code).toBe('EAGAIN'); // open, empty: nothing written
      }
      expect(b.subarray(0, n).toString()).toBe('');
    } finally {
      closeSync(reader);
    }
  });
});
