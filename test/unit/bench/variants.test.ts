import { describe, expect, it } from 'vitest';
import { expandVariants, parseConcurrency, parseVary, presetVariants, findPreset, variantSetArgs, pickVariants, refuseComparedSets } from '../../../src/bench/variants.js';
import { PRESETS } from '../../../src/bench/presets.js';

describe('bench variants', () => {
  it('crosses each recipe with every --vary value, in the order given; the first is the reference', () => {
    const v = expandVariants(['mocker'], [parseVary('frontend.routerMode=kv,round-robin,random')]);
    expect(v.map((x) => x.name)).toEqual(['routerMode=kv', 'routerMode=round-robin', 'routerMode=random']);
    expect(v[1].sets).toEqual({ 'frontend.routerMode': 'round-robin' });
    expect(variantSetArgs(v[1], [])).toEqual(['frontend.routerMode=round-robin']);
  });

  it('names variants by recipe when there are several, and crosses two --vary keys', () => {
    const v = expandVariants(['agg', 'mocker'], [parseVary('frontend.routerMode=kv,random'), parseVary('workers.0.replicas=1,2')]);
    expect(v).toHaveLength(8);
    expect(v[0].name).toBe('agg routerMode=kv replicas=1');
    expect(v[7].name).toBe('mocker routerMode=random replicas=2');
    expect(expandVariants(['agg', 'mocker'], []).map((x) => x.name)).toEqual(['agg', 'mocker']);
  });

  it('refuses a bad --vary, a repeated key, a repeated value, a recipe given twice', () => {
    expect(() => parseVary('frontend.routerMode')).toThrow(/--vary "frontend.routerMode": expected KEY=V1,V2/);
    expect(() => parseVary('a=x,,y')).toThrow(/expected KEY=V1,V2/);
    expect(() => parseVary('a=x,x')).toThrow(/given twice/);
    expect(() => expandVariants(['agg'], [parseVary('a=1'), parseVary('a=2')])).toThrow(/--vary a is given twice/);
    expect(() => expandVariants(['agg', 'agg'], [])).toThrow(/would run twice/);
  });

  it('--concurrency: whole numbers >= 1, duplicates dropped', () => {
    expect(parseConcurrency(['1', '4', '4'])).toEqual([1, 4]);
    expect(() => parseConcurrency(['0'])).toThrow(/--concurrency: "0" is not a whole number from 1 to 4096/);
    expect(() => parseConcurrency(['1.5'])).toThrow(/--concurrency/);
  });

  it('an unknown preset is an input error naming the valid ones', () => {
    expect(() => findPreset('nope')).toThrow('--preset: unknown preset "nope"; valid: routing, agg-vs-disagg, frontend-overhead');
    expect(() => findPreset('constructor')).toThrow(/unknown preset/);
  });
});

describe('--set over a bench\'s variants', () => {
  const routing = () => presetVariants(PRESETS.routing, 'mocker');

  it('the user\'s value wins over a preset\'s engine tuning, given once and last (8 mocker workers, not the preset\'s 4)', () => {
    const args = variantSetArgs(routing()[0], ['workers.0.replicas=8', 'frontend.httpPort=9000']);
    expect(args.filter((a) => a.startsWith('workers.0.replicas='))).toEqual(['workers.0.replicas=8']);
    expect(args.slice(-2)).toEqual(['workers.0.replicas=8', 'frontend.httpPort=9000']);
    expect(args).toContain(`workers.0.args=${routing()[0].sets['workers.0.args']}`);
  });

  it('refuses a field the variants differ in, naming each one\'s value; a field they share, or one they all leave to the recipe, is the user\'s', () => {
    expect(() => refuseComparedSets(routing(), ['frontend.routerMode=kv'])).toThrow(
      "--set frontend.routerMode: the variants differ in this field (kv-events: the recipe's, kv-approx: the recipe's, round-robin: round-robin, random: random, kv-events-off: the recipe's), so it is what they compare; leave it to them, or pick variants with --variants and values with --vary",
    );
    // The control's worker args differ from the others' (prefix caching off).
    expect(() => refuseComparedSets(routing(), ['workers.0.args=[]'])).toThrow(/^--set workers\.0\.args: the variants differ/);
    expect(() => refuseComparedSets(routing(), ['workers.0.replicas=8', 'frontend.httpPort=9000', 'model=x'])).not.toThrow();
    // Narrowed to variants that agree on the args, the user may set them.
    const two = pickVariants(routing(), PRESETS.routing, ['kv-events', 'round-robin']);
    expect(() => refuseComparedSets(two, ['workers.0.args=[]'])).not.toThrow();
    expect(() => refuseComparedSets(two, ['frontend.routerMode=kv'])).toThrow(/round-robin: round-robin/);
    // --vary's key is compared too; a malformed --set is left to the recipe loader (which names it).
    const varied = expandVariants(['mocker'], [parseVary('frontend.routerMode=kv,random')]);
    expect(() => refuseComparedSets(varied, ['frontend.routerMode=kv'])).toThrow(/routerMode=kv: kv, routerMode=random: random/);
    expect(() => refuseComparedSets(varied, ['frontend.routerMode'])).not.toThrow();
    expect(variantSetArgs(varied[0], ['frontend.routerMode'])).toEqual(['frontend.routerMode=kv', 'frontend.routerMode']);
  });
});

describe('bench presets', () => {
  it('routing: five variants on eight mocker workers without a GPU, 12 prefixes, concurrency 1 and 4, 72 requests (12 x 6), events off a control', () => {
    const p = PRESETS.routing;
    const v = presetVariants(p, 'mocker');
    expect(v.map((x) => x.name)).toEqual(['kv-events', 'kv-approx', 'round-robin', 'random', 'kv-events-off']);
    expect(v.every((x) => x.recipe === 'mocker')).toBe(true);
    // The mocker's prefill slowed so a cache hit's saved prefill shows in TTFT; eight workers; events off = prefix caching off.
    expect(v[0].sets).toEqual({ 'workers.0.args': '["--speedup-ratio","0.05","--decode-speedup-ratio","20"]', 'workers.0.replicas': '8' });
    expect(v[2].sets).toEqual({ 'frontend.routerMode': 'round-robin', 'workers.0.args': '["--speedup-ratio","0.05","--decode-speedup-ratio","20"]', 'workers.0.replicas': '8' });
    expect(v[4].sets).toEqual({ 'workers.0.args': '["--speedup-ratio","0.05","--decode-speedup-ratio","20","--no-enable-prefix-caching"]', 'workers.0.replicas': '8' });
    expect(v.map((x) => x.control?.gate ?? null)).toEqual([null, null, null, null, 'kv.events']);
    expect(presetVariants(p, 'vllm')[4].sets).toEqual({ 'workers.0.args': '["--no-enable-prefix-caching"]' });
    expect(presetVariants(p, 'vllm')[0].sets).toEqual({});
    expect(p.load.prefixes?.count).toBe(12);
    expect(p.requests).toBe(12 * 6);
    expect(p.concurrency).toEqual([1, 4]);
    expect(presetVariants(p, 'vllm').every((x) => x.recipe === 'agg-router')).toBe(true);
  });

  it('agg-vs-disagg: the mocker in its disaggregation mode, concurrency 1 and 4, 64 output tokens', () => {
    const v = presetVariants(PRESETS['agg-vs-disagg'], 'mocker');
    // The agg variant's model (the mocker recipe's embedded one): model.same compares like with like.
    expect(v[1]).toMatchObject({ name: 'disagg', recipe: 'disagg-same-gpu', sets: { engine: 'mocker', model: 'dynamo-dev/tiny' } });
    expect(PRESETS['agg-vs-disagg'].concurrency).toEqual([1, 4]);
    expect(PRESETS['agg-vs-disagg'].load.outputTokens).toBe(64);
    expect(presetVariants(PRESETS['agg-vs-disagg'], 'vllm')[1].sets).toEqual({});
  });

  it('frontend-overhead on the mocker says plainly that the engine alone cannot be measured', () => {
    const v = presetVariants(PRESETS['frontend-overhead'], 'mocker');
    expect(v[0].unmeasurable).toBeNull();
    expect(v[1].unmeasurable).toMatch(/mocker has no OpenAI server of its own/);
  });

  it('--vary on a preset crosses each of its variants', () => {
    const v = presetVariants(PRESETS['agg-vs-disagg'], 'mocker', [parseVary('maxModelLen=2048,4096')]);
    expect(v.map((x) => x.name)).toEqual(['agg maxModelLen=2048', 'agg maxModelLen=4096', 'disagg maxModelLen=2048', 'disagg maxModelLen=4096']);
    expect(v[3].sets).toEqual({ engine: 'mocker', model: 'dynamo-dev/tiny', maxModelLen: '4096' });
  });
});

describe('--variants: a preset narrowed', () => {
  const routing = PRESETS.routing;
  it('keeps the named variants in the preset\'s order (its first stays the reference), whatever order they are given in', () => {
    const picked = pickVariants(presetVariants(routing, 'vllm'), routing, ['round-robin', 'kv-events']);
    expect(picked.map((v) => v.name)).toEqual(['kv-events', 'round-robin']);
    expect(picked[0].recipe).toBe('agg-router');
    expect(picked[1].sets).toEqual({ 'frontend.routerMode': 'round-robin' });
  });
  it('none given: every variant; a control is kept with its gate', () => {
    expect(pickVariants(presetVariants(routing, 'vllm'), routing, undefined)).toHaveLength(5);
    expect(pickVariants(presetVariants(routing, 'vllm'), routing, ['kv-events-off'])[0].control?.gate).toBe('kv.events');
  });
  it('with --vary, a name picks every variant crossed from it (not one whose name only starts alike: kv-events vs kv-events-off)', () => {
    const crossed = presetVariants(routing, 'vllm', [parseVary('frontend.httpPort=9000,9100')]);
    expect(pickVariants(crossed, routing, ['kv-events']).map((v) => v.name)).toEqual(['kv-events httpPort=9000', 'kv-events httpPort=9100']);
  });
  it('an unknown name: one line naming it and the preset\'s variants', () => {
    expect(() => pickVariants(presetVariants(routing, 'vllm'), routing, ['kv', 'random'])).toThrow(
      '--variants: preset routing has no variant "kv"; its variants: kv-events, kv-approx, round-robin, random, kv-events-off',
    );
  });
});
