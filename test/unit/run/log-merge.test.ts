import { describe, expect, it } from 'vitest';
import { mergeByTime, type MergeSource } from '../../../src/run/log-merge.js';

// run/log-merge.ts: `logs` with no process named interleaves the processes' logs by the time each
// line says (Dynamo's ISO times here, as 1.6.1 writes them). What a reader sees: every line once,
// each file in its own order, untimed lines (a traceback) right after the line before them.

process.env.TZ = 'UTC';
const near = Date.parse('2026-12-07T20:00:00Z');
const at = (s: number, text: string) => `2026-12-07T20:00:${String(s).padStart(2, '0')}.000000Z  INFO ${text}`;

async function* batches(...bs: string[][]): AsyncGenerator<string[]> {
  for (const b of bs) yield b;
}
const src = (name: string, bs: string[][], o: Partial<MergeSource> = {}): MergeSource => ({ name, batches: batches(...bs), startMs: null, ...o });

/** What `logs` prints: `name| line` in the order emitted, and the runs as emitted. */
async function merge(sources: MergeSource[], stop?: () => boolean): Promise<{ lines: string[]; runs: string[] }> {
  const lines: string[] = [];
  const runs: string[] = [];
  await mergeByTime(sources, (name, ls) => {
    runs.push(`${name} x${ls.length}`);
    for (const l of ls) lines.push(`${name}| ${l.replace(/^2026-12-07T20:00:(\d\d)\.000000Z {2}INFO /, '$1 ')}`);
  }, { nearMs: near, stop });
  return { lines, runs };
}

describe('mergeByTime: several logs as one, by the times their lines say', () => {
  it('interleaves two files line by line by time; a run of lines ahead of the other file goes out as one', async () => {
    const out = await merge([
      src('frontend', [[at(1, 'f1'), at(2, 'f2'), at(3, 'f3'), at(7, 'f7')]]),
      src('agg-0', [[at(4, 'w4'), at(5, 'w5'), at(8, 'w8')]]),
    ]);
    expect(out.lines).toEqual(['frontend| 01 f1', 'frontend| 02 f2', 'frontend| 03 f3', 'agg-0| 04 w4', 'agg-0| 05 w5', 'frontend| 07 f7', 'agg-0| 08 w8']);
    expect(out.runs).toEqual(['frontend x3', 'agg-0 x2', 'frontend x1', 'agg-0 x1']);
  });

  it('a traceback (no time) stays right after the line before it, though the other file has lines between', async () => {
    const out = await merge([
      src('agg-0', [[at(2, 'w2 crash'), 'Traceback (most recent call last):', '  File "x.py", line 1', 'RuntimeError: boom', at(9, 'w9')]]),
      src('frontend', [[at(3, 'f3'), at(4, 'f4')]]),
    ]);
    expect(out.lines).toEqual(['agg-0| 02 w2 crash', 'agg-0| Traceback (most recent call last):', 'agg-0|   File "x.py", line 1', 'agg-0| RuntimeError: boom', 'frontend| 03 f3', 'frontend| 04 f4', 'agg-0| 09 w9']);
  });

  it('untimed first lines take the process\'s start; with no start, before everything; with a tail\'s earlier lines, their last time', async () => {
    const started = await merge([
      src('frontend', [[at(1, 'f1'), at(5, 'f5')]]),
      src('agg-0', [['untimed banner', at(6, 'w6')]], { startMs: Date.parse('2026-12-07T20:00:03Z') }),
    ]);
    expect(started.lines).toEqual(['frontend| 01 f1', 'agg-0| untimed banner', 'frontend| 05 f5', 'agg-0| 06 w6']);
    const noStart = await merge([src('frontend', [[at(1, 'f1')]]), src('agg-0', [['untimed banner', at(6, 'w6')]])]);
    expect(noStart.lines[0]).toBe('agg-0| untimed banner');
    // A tail: the lines before it in the file say 00:00:04, so its untimed first line sorts there, not at the start.
    const tail = await merge([
      src('frontend', [[at(2, 'f2'), at(5, 'f5')]]),
      src('agg-0', [['  continued', at(6, 'w6')]], { startMs: 0, before: [at(3, 'w3'), at(4, 'w4'), 'untimed'] }),
    ]);
    expect(tail.lines).toEqual(['frontend| 02 f2', 'agg-0|   continued', 'frontend| 05 f5', 'agg-0| 06 w6']);
  });

  it('a file whose times go backwards keeps its own order; equal times keep the sources\' order', async () => {
    const back = await merge([
      src('agg-0', [[at(5, 'w5'), at(4, 'w4 flushed late'), at(6, 'w6')]]),
      src('frontend', [[at(1, 'f1'), at(5, 'f5 same second')]]),
    ]);
    expect(back.lines).toEqual(['frontend| 01 f1', 'agg-0| 05 w5', 'agg-0| 04 w4 flushed late', 'frontend| 05 f5 same second', 'agg-0| 06 w6']);
    const tie = await merge([src('b-first', [[at(1, 'b')]]), src('a-second', [[at(1, 'a')]])]);
    expect(tie.lines).toEqual(['b-first| 01 b', 'a-second| 01 a']);
  });

  it('reads batch after batch (a run ends where its batch ends); an empty file and empty batches are passed over', async () => {
    const out = await merge([
      src('frontend', [[at(1, 'f1'), at(2, 'f2')], [], [at(3, 'f3')], [at(9, 'f9')]]),
      src('empty', []),
      src('agg-0', [[], [at(4, 'w4')]]),
    ]);
    expect(out.lines).toEqual(['frontend| 01 f1', 'frontend| 02 f2', 'frontend| 03 f3', 'agg-0| 04 w4', 'frontend| 09 f9']);
    expect(out.runs).toEqual(['frontend x2', 'frontend x1', 'agg-0 x1', 'frontend x1']);
  });

  it('stops when the reader went away: nothing more is pulled or emitted', async () => {
    let pulled = 0;
    async function* counted(): AsyncGenerator<string[]> {
      for (let s = 1; s <= 50; s++) { pulled++; yield [at(s, `f${s}`)]; }
    }
    let emitted = 0;
    await mergeByTime([{ name: 'frontend', batches: counted(), startMs: null }], () => { emitted++; }, { nearMs: near, stop: () => emitted >= 3 });
    expect(emitted).toBe(3);
    expect(pulled).toBeLessThanOrEqual(4);
  });
});
