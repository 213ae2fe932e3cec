import { describe, expect, it } from 'vitest';
import {
  checkImage, checkName, checkNamespace, checkSecretName, imageTag, isReleaseVersion, parseApi, parseReplicas,
} from '../../../src/export/options.js';
import { defaultImage } from '../../../src/export/render.js';

describe('export k8s flags', () => {
  it('--api: the newer version by default, the two versions, nothing else', () => {
    expect(parseApi(undefined)).toBe('v1beta1');
    expect(parseApi('v1alpha1')).toBe('v1alpha1');
    expect(() => parseApi('v1')).toThrow('--api: unknown API version "v1"; valid: v1beta1, v1alpha1 (default v1beta1)');
  });

  it('--replicas ROLE=N: whole numbers >= 1, once per role', () => {
    expect(parseReplicas(['agg=4', 'frontend=2'])).toEqual({ agg: 4, frontend: 2 });
    expect(parseReplicas([])).toEqual({});
    expect(() => parseReplicas(['agg'])).toThrow('--replicas: "agg" is not ROLE=N');
    expect(() => parseReplicas(['agg=0'])).toThrow('--replicas agg: N must be a whole number >= 1 (got 0)');
    expect(() => parseReplicas(['agg=1.5'])).toThrow('is not ROLE=N');
    expect(() => parseReplicas(['agg=2', 'agg=3'])).toThrow('--replicas: role "agg" is given twice');
  });

  it('--name, --namespace, --hf-secret, --image: Kubernetes names and image references', () => {
    expect(checkName('exp-1')).toBe('exp-1');
    for (const bad of ['Exp', '1exp', 'exp-', 'a'.repeat(64), 'a_b']) expect(() => checkName(bad)).toThrow('--name:');
    expect(checkNamespace('0-team')).toBe('0-team');
    expect(() => checkNamespace('Team')).toThrow('--namespace:');
    expect(checkSecretName('hf.token-1')).toBe('hf.token-1');
    expect(() => checkSecretName('HF')).toThrow('--hf-secret:');
    expect(checkImage('my.registry:5000/vllm:dev')).toBe('my.registry:5000/vllm:dev');
    expect(() => checkImage('a b')).toThrow('--image:');
    expect(() => checkImage('')).toThrow('--image:');
  });

  it('image tags: registry ports and digests are not tags', () => {
    expect(imageTag('nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1')).toBe('1.6.1');
    expect(imageTag('my.registry:5000/vllm')).toBeNull();
    expect(imageTag('my.registry:5000/vllm:dev')).toBe('dev');
    expect(imageTag('vllm@sha256:abc')).toBeNull();
    expect(imageTag('vllm:1.6.1@sha256:abc')).toBe('1.6.1');
    expect(isReleaseVersion('1.6.1')).toBe(true);
    expect(isReleaseVersion('1.7.0.dev0+g1234')).toBe(false);
  });

  it('default images: vllm-runtime for vLLM, dynamo-planner for the mocker (upstream has no mocker image)', () => {
    expect(defaultImage('vllm', '1.6.1')).toBe('nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1');
    expect(defaultImage('mocker', '1.6.1')).toBe('nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1');
  });
});
