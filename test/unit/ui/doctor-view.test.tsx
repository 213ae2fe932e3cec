import { describe, expect, it } from 'vitest';
import { render } from 'ink-testing-library';
import { DoctorView } from '../../../src/ui/doctor-view.js';
import type { CheckOutcome } from '../../../src/doctor/types.js';

const outcome = (o: Partial<CheckOutcome>): CheckOutcome => ({
  id: 'gpu.driver', title: 'NVIDIA driver and GPU', status: 'pass', summary: 'ok', details: [], fix: null, evidence: {}, durationMs: 1, ...o,
});

const tick = () => new Promise((r) => setTimeout(r, 20));

describe('DoctorView', () => {
  it('shows a spinner per running check and replaces each with its result as it settles', async () => {
    let emit: (o: CheckOutcome, i: number) => void = () => {};
    const { lastFrame, unmount } = render(
      <DoctorView titles={['NVIDIA driver and GPU', 'Ports of the plan are free']} subscribe={(on) => { emit = on; return () => {}; }} />,
    );
    expect(lastFrame()).toMatch(/NVIDIA driver and GPU\s+checking…/);
    expect(lastFrame()).toMatch(/Ports of the plan are free\s+checking…/);

    emit(outcome({ id: 'ports.free', title: 'Ports of the plan are free', summary: '2 ports free: 8000, 8081' }), 1);
    await tick();
    expect(lastFrame()).toMatch(/✓ Ports of the plan are free\s+2 ports free: 8000, 8081/);
    expect(lastFrame()).toMatch(/NVIDIA driver and GPU\s+checking…/);

    emit(outcome({ status: 'fail', summary: 'nvidia-smi not found', fix: 'install the NVIDIA driver', details: ['PATH=/usr/bin'] }), 0);
    await tick();
    const frame = lastFrame()!;
    expect(frame).toMatch(/✗ NVIDIA driver and GPU\s+nvidia-smi not found/);
    expect(frame).toContain('    PATH=/usr/bin');
    expect(frame).toContain('    fix: install the NVIDIA driver');
    expect(frame).not.toContain('checking…');
    unmount();
  });

  it('prints results once, in declared order: a check that settles early waits on one line without its details', async () => {
    let emit: (o: CheckOutcome, i: number) => void = () => {};
    const { frames, lastFrame, unmount } = render(
      <DoctorView titles={['NVIDIA driver and GPU', 'Ports of the plan are free']} subscribe={(on) => { emit = on; return () => {}; }} />,
    );
    emit(outcome({ id: 'ports.free', title: 'Ports of the plan are free', status: 'fail', summary: 'port 8000 in use', details: ['port 8000 (frontend.http) is in use by pid 7'], fix: 'kill 7' }), 1);
    await tick();
    expect(lastFrame()).toMatch(/✗ Ports of the plan are free\s+port 8000 in use/);
    expect(lastFrame()).not.toContain('fix: kill 7');
    emit(outcome({ summary: 'GeForce RTX 4060' }), 0);
    await tick();
    const frame = lastFrame()!;
    expect(frame.indexOf('✓ NVIDIA driver and GPU')).toBeLessThan(frame.indexOf('✗ Ports of the plan are free'));
    expect(frame).toContain('    fix: kill 7');
    // Each result was written once (ink <Static>), never redrawn: one copy of the fix line in the final output.
    expect(frame.split('fix: kill 7')).toHaveLength(2);
    expect(frames.length).toBeGreaterThan(0);
    unmount();
  });

  it('keeps the live part below the terminal height, so ink never clears the screen and its scrollback', async () => {
    const titles = Array.from({ length: 12 }, (_, i) => `Check number ${i}`);
    const { lastFrame, unmount } = render(<DoctorView titles={titles} subscribe={() => () => {}} rows={6} />);
    const lines = lastFrame()!.split('\n');
    expect(lines.length).toBeLessThan(6);
    expect(lines[lines.length - 1]).toBe('… 9 more');
    unmount();
  });
});
