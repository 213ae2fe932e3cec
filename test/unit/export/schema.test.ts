import { describe, expect, it } from 'vitest';
import { planToComponents } from '../../../src/export/components.js';
import { render, type ApiVersion } from '../../../src/export/render.js';
import { checkManifest } from '../../../src/export/schema.js';
import { listBuiltinRecipes, loadRecipe } from '../../../src/host/files/recipes.js';
import { buildPlan } from '../../../src/plan/build.js';

const RUN = '/state/runs/r1';

async function manifest(name: string, api: ApiVersion) {
  const recipe = await loadRecipe(name);
  const plan = buildPlan({ recipe, runDir: RUN });
  const model = planToComponents({ plan, recipe, hfSecret: 'hf-token-secret', markers: { paths: [RUN, '/state'] } });
  return render(api, model, { image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1', namespace: 'dynamo' }).doc as any;
}

const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x));

describe('checkManifest: what export writes conforms to the CRD', () => {
  it('every built-in recipe, both API versions', async () => {
    for (const r of await listBuiltinRecipes()) {
      for (const api of ['v1beta1', 'v1alpha1'] as const) {
        expect([r.name, api, checkManifest(await manifest(r.name, api), api)]).toEqual([r.name, api, []]);
      }
    }
  });
});

describe('checkManifest v1beta1: each rule catches its break', () => {
  const cases: [string, (d: any) => void, string][] = [
    ['component type outside the enum', (d) => { d.spec.components[1].type = 'agg'; }, 'spec.components[1].type: "agg" is not one of frontend, worker, prefill, decode, planner, epp'],
    ['no container named main', (d) => { d.spec.components[1].podTemplate.spec.containers[0].name = 'vllm'; }, 'spec.components[1].podTemplate.spec.containers: needs exactly one container named "main", has 0'],
    ['component name with an underscore', (d) => { d.spec.components[1].name = 'Vllm_Worker'; }, 'spec.components[1].name: "Vllm_Worker" does not match'],
    ['names equal but for case', (d) => { d.spec.components[1].name = 'frontend'; }, 'names must be unique case-insensitively'],
    ['negative replicas', (d) => { d.spec.components[1].replicas = -1; }, 'spec.components[1].replicas: -1 is outside 0..2147483647'],
    ['a field the CRD lacks', (d) => { d.spec.components[1].podTemplate.spec.containers[0].evn = []; }, 'spec.components[1].podTemplate.spec.containers[0].evn: not a field of the CRD'],
    ['a GPU count that is no quantity', (d) => { d.spec.components[1].podTemplate.spec.containers[0].resources.limits['nvidia.com/gpu'] = 'one'; }, '"one" does not match'],
    ['an env var without a name', (d) => { d.spec.env = [{ value: '0' }]; }, 'spec.env[0].name: is required'],
    ['wrong apiVersion', (d) => { d.apiVersion = 'nvidia.com/v1alpha1'; }, 'apiVersion: must be "nvidia.com/v1beta1"'],
    ['an upper-case metadata.name', (d) => { d.metadata.name = 'Agg'; }, 'metadata.name: "Agg" does not match'],
    ['more than 25 components', (d) => { d.spec.components = Array.from({ length: 26 }, (_, i) => ({ ...d.spec.components[1], name: `w${i}` })); }, 'spec.components: has 26 items, at most 25'],
  ];
  for (const [what, breakIt, problem] of cases) {
    it(what, async () => {
      const d = clone(await manifest('agg', 'v1beta1'));
      breakIt(d);
      expect(checkManifest(d, 'v1beta1').join('\n')).toContain(problem);
    });
  }
});

describe('checkManifest v1alpha1: each rule catches its break', () => {
  const cases: [string, (d: any) => void, string][] = [
    ['a GPU limit given as a number', (d) => { d.spec.services.VllmWorker.resources.limits.gpu = 1; }, 'spec.services.VllmWorker.resources.limits.gpu: must be a string, got number'],
    ['a v1beta1 field in a v1alpha1 service', (d) => { d.spec.services.VllmWorker.podTemplate = {}; }, 'spec.services.VllmWorker.podTemplate: not a field of the CRD'],
    ['a sub-role outside prefill/decode', (d) => { d.spec.services.VllmWorker.subComponentType = 'agg'; }, 'subComponentType: "agg" is not one of prefill, decode'],
    ['a main container without an image', (d) => { delete d.spec.services.VllmWorker.extraPodSpec.mainContainer.image; }, 'spec.services.VllmWorker.extraPodSpec.mainContainer.image: is required'],
    ['graph env under the v1beta1 name', (d) => { d.spec.env = d.spec.envs; }, 'spec.env: not a field of the CRD'],
  ];
  for (const [what, breakIt, problem] of cases) {
    it(what, async () => {
      const d = clone(await manifest('agg', 'v1alpha1'));
      breakIt(d);
      expect(checkManifest(d, 'v1alpha1').join('\n')).toContain(problem);
    });
  }
});
