import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendRestartEvent, eventsPath, takeRestartRequests, writeRestartRequest, type RestartRequest } from '../../../src/run/restart-request.js';
import { readStatSync } from '../../../src/host/procs/proc-files.js';

// The restart request's files (issue 29's property, on the files a restart writes): the request
// is written through an exclusive unguessable temporary (was `<request>.tmp`, followed if a link);
// the events file is created exclusively by the command and only appended to by the supervisor,
// never through a link; a request is claimed by link + unlink, so a file at `<request>.taken`
// that is not ours is never replaced.

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
function stateDir() {
  const d = mkdtempSync(join(tmpdir(), 'dd-restart-files-'));
  dirs.push(d);
  mkdirSync(join(d, 'runs', 'r1', 'restart'), { recursive: true });
  return d;
}
const me = (): RestartRequest['by'] => ({ pid: process.pid, startTicks: readStatSync(process.pid)!.startTicks });
const req = (id: string): RestartRequest => ({ id, process: 'agg-0', graceMs: 1000, readyTimeoutMs: 0, by: me() });

describe('restart request files', () => {
  it('a link or FIFO already at the events path: the request is refused (EEXIST), the link\'s target untouched, no request left', () => {
    for (const kind of ['link', 'fifo'] as const) {
      const d = stateDir();
      const secret = join(d, 'secret');
      writeFileSync(secret, 'keep');
      const events = eventsPath(d, 'r1', `1-${kind}`);
      if (kind === 'link') symlinkSync(secret, events);
      else execFileSync('mkfifo', [events]);
      expect(() => writeRestartRequest(d, 'r1', req(`1-${kind}`))).toThrow(/EEXIST/);
      expect(readFileSync(secret, 'utf8')).toBe('keep');
      expect(readdirSync(join(d, 'runs', 'r1', 'restart')).filter((n) => n.includes('.request'))).toEqual([]);
    }
  });

  it('the supervisor appends only to an events file that is a file: a link put there later is not written through, a FIFO does not block', () => {
    const d = stateDir();
    const secret = join(d, 'secret');
    writeFileSync(secret, 'keep');
    writeRestartRequest(d, 'r1', req('2-a'));
    expect(readdirSync(join(d, 'runs', 'r1', 'restart')).sort()).toEqual(['2-a.events', '2-a.request']);
    appendRestartEvent(d, 'r1', '2-a', { event: 'taken', process: 'agg-0', pid: 1 });
    expect(readFileSync(eventsPath(d, 'r1', '2-a'), 'utf8')).toBe('{"event":"taken","process":"agg-0","pid":1}\n');
    rmSync(eventsPath(d, 'r1', '2-a'));
    symlinkSync(secret, eventsPath(d, 'r1', '2-a'));
    appendRestartEvent(d, 'r1', '2-a', { event: 'taken', process: 'agg-0', pid: 1 });
    expect(readFileSync(secret, 'utf8')).toBe('keep');
    rmSync(eventsPath(d, 'r1', '2-a'));
    execFileSync('mkfifo', [eventsPath(d, 'r1', '2-a')]);
    appendRestartEvent(d, 'r1', '2-a', { event: 'taken', process: 'agg-0', pid: 1 }); // returns: no reader, ENXIO
    rmSync(eventsPath(d, 'r1', '2-a'));
    // Nothing of the temporary write is left beside the request.
    expect(readdirSync(join(d, 'runs', 'r1', 'restart')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('a request is claimed once; a foreign file at <request>.taken is never replaced (the request then stays unclaimed)', () => {
    const d = stateDir();
    writeRestartRequest(d, 'r1', req('3-a'));
    expect(takeRestartRequests(d, 'r1').map((r) => r.id)).toEqual(['3-a']);
    expect(takeRestartRequests(d, 'r1')).toEqual([]);
    writeRestartRequest(d, 'r1', req('3-b'));
    const taken = join(d, 'runs', 'r1', 'restart', '3-b.request.taken');
    symlinkSync('/etc/hostname', taken);
    expect(takeRestartRequests(d, 'r1')).toEqual([]);
    expect(lstatSync(taken).isSymbolicLink() && readlinkSync(taken)).toBe('/etc/hostname');
  });
});
