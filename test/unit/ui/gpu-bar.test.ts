import { beforeEach, describe, expect, it } from 'vitest';
import type { Plan } from '../../../src/plan/types.js';
import { loadRecipe } from '../../../src/host/files/recipes.js';
import { buildPlan } from '../../../src/plan/build.js';
import { barCells, formatGpuPicture, gpuPicture } from '../../../src/ui/gpu-bar.js';

// Qwen3-0.6B: 114,688 bytes per token, ~1,144 MiB of weights (FACTS §3), on the 8,188 MiB laptop GPU.
const model = { bytesPerToken: 114_688, weightsMiB: 1144.41 };
// Built before each test, not at module load: mutation testing counts code run at load as "static" and reruns every test for each such mutant.
let plan: Plan;
beforeEach(async () => {
  plan = buildPlan({ recipe: await loadRecipe('agg-router'), runDir: '/s/runs/r1', gpuTotalMiB: 8188, model });
});

describe('GPU picture', () => {
  it('each worker\'s share splits into weights + KV + other exactly; shares + free = the GPU total', () => {
    const pic = gpuPicture(plan)!;
    expect(pic.slices.map((s) => s.mib)).toEqual([3111, 3112]);
    expect(pic.slices.reduce((a, s) => a + s.mib, 0) + pic.freeMiB).toBe(8188);
    // The plan's own budget: round(8188 x 0.76).
    expect(pic.totalMiB - pic.freeMiB).toBe(Math.round(8188 * plan.budget.fractionSum));
    for (const s of pic.slices) expect(s.weightsMiB! + s.kvMiB! + s.overheadMiB!).toBe(s.mib);
    // Before start the KV part is the plan's estimate.
    expect(pic.slices[0].kvTokens).toBe(plan.processes[1].kvTokensEstimate);
    expect(pic.slices[0].measured).toBe(false);
  });

  it('measured KV tokens replace the estimate; other is what remains of the share', () => {
    const pic = gpuPicture(plan, { 'agg-0': 14_816, 'agg-1': 14_816 })!;
    const s = pic.slices[0];
    expect(s).toMatchObject({ measured: true, kvTokens: 14_816, kvMiB: Math.round((14_816 * 114_688) / 2 ** 20), weightsMiB: 1144 });
    expect(s.overheadMiB).toBe(3111 - 1144 - s.kvMiB!);
  });

  it('the bar has exactly `width` cells, each part in proportion; the legend numbers are the picture\'s', () => {
    const pic = gpuPicture(plan, { 'agg-0': 14_816 })!;
    for (const width of [10, 37, 60]) {
      const cells = barCells(pic, width);
      expect(cells.reduce((a, c) => a + c.weights + c.kv + c.overhead + c.unknown, 0) + cells.free!).toBe(width);
      expect(cells[0].weights + cells[0].kv + cells[0].overhead).toBe(cells[0].slice);
    }
    const text = formatGpuPicture(pic, { width: 80, fancy: false });
    const bar = /\[([^\]]+)\]/.exec(text)![1];
    expect(bar).toMatch(/^W+K+o+W+K+o+\.+$/);
    const legend = [...text.matchAll(/= ([\d,]+) MiB: weights ([\d,]+) \+ KV ~?([\d,]+) \+ other ~?([\d,]+)/g)]
      .map((m) => m.slice(1).map((x) => Number(x.replace(/,/g, ''))));
    expect(legend).toHaveLength(2);
    for (const [share, w, kv, other] of legend) expect(w + kv + other).toBe(share);
    const free = Number(/free\s+([\d,]+) MiB/.exec(text)![1].replace(/,/g, ''));
    expect(legend.reduce((a, [share]) => a + share, 0) + free).toBe(8188);
    for (const l of text.split('\n')) expect(l.length).toBeLessThanOrEqual(80);
  });

  it('no picture without the GPU total or for the mocker; an uncached model shows the share only', async () => {
    expect(gpuPicture(buildPlan({ recipe: await loadRecipe('agg-router'), runDir: '/r' }))).toBeNull();
    expect(gpuPicture(buildPlan({ recipe: await loadRecipe('mocker'), runDir: '/r', gpuTotalMiB: 8188 }))).toBeNull();
    const bare = gpuPicture(buildPlan({ recipe: await loadRecipe('agg-router'), runDir: '/r', gpuTotalMiB: 8188 }))!;
    expect(formatGpuPicture(bare, { width: 80, fancy: false })).toContain('split unknown (model not in the HF cache)');
  });

  it("a run.json's plan without the parts a picture needs (older or hand-edited record): no picture, no crash", async () => {
    const full = buildPlan({ recipe: await loadRecipe('agg-router'), runDir: '/r', gpuTotalMiB: 8188 });
    expect(gpuPicture({} as Plan)).toBeNull();
    expect(gpuPicture({ ...full, gpu: { index: 0 } } as unknown as Plan)).toBeNull();
    expect(gpuPicture({ ...full, processes: undefined } as unknown as Plan)).toBeNull();
    expect(gpuPicture({ ...full, budget: undefined } as unknown as Plan)).toBeNull();
    expect(gpuPicture(full)).not.toBeNull();
  });
});
