import { describe, expect, it } from 'vitest';
import { chooseFix, fittingFraction, planContext, portNamedIn } from '../../../src/diagnose/choose-fix.js';
import { signatureFor } from '../../../src/diagnose/signatures.js';

// The fix follows the quoted line and, for a run's log, the run's plan: recipe advice only where the
// plan makes it true. Lines from test/fixtures/corpus (real threads) and the samples.

const FREE = "ValueError: Free memory on device (3.22/4.0 GiB) on startup is less than desired GPU memory utilization (0.9, 3.6 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.";
const base = (code: string) => signatureFor(code)!.fix;
const worker = (waitFor: string[]) => ({ gpuMemoryUtilization: 0.4, waitFor });
const frontend = { gpuMemoryUtilization: null, waitFor: [] };

describe('chooseFix', () => {
  it('free memory: two workers of our run on one GPU started together: start them one after another', () => {
    const ctx = planContext({ processes: [frontend, worker([]), worker([])] });
    expect(ctx).toEqual({ ours: true, workersOnGpu: 2, parallelStart: true });
    expect(chooseFix('vllm.free-memory', FREE, base('vllm.free-memory'), ctx)).toContain('start workers one after another');
  });

  it('free memory, one worker of our run: the recipe setting that fits what is free, no word of starting together', () => {
    const fix = chooseFix('vllm.free-memory', FREE, base('vllm.free-memory'), planContext({ processes: [frontend, worker([])] }));
    expect(fix).toContain('--set workers.0.gpuMemoryUtilization=0.79');
    expect(fix).toContain('0.78 GiB of its 4 GiB');
    expect(fix).not.toMatch(/one after another|sequential|sum to/);
  });

  it('free memory, several workers started one after another: their fractions must fit, nothing about the start order', () => {
    const fix = chooseFix('vllm.free-memory', FREE, base('vllm.free-memory'), planContext({ processes: [frontend, worker([]), worker(['agg-0'])] }));
    expect(fix).toContain('must sum to what is free');
    expect(fix).not.toContain('one after another');
  });

  it('free memory in a log from anywhere: vLLM\'s flag, no recipe', () => {
    const fix = chooseFix('vllm.free-memory', FREE, base('vllm.free-memory'));
    expect(fix).toContain('--gpu-memory-utilization 0.79');
    expect(fix).not.toMatch(/--set|recipe|one after another/);
  });

  it('the fitting fraction stays below the free share, never 0', () => {
    expect(fittingFraction(31.44, 47.38)).toBe(0.65);
    expect(fittingFraction(2.41, 7.6)).toBe(0.3);
    expect(fittingFraction(0.1, 80)).toBe(0.01);
  });

  it('memory profiling: start order only for workers of our run started together', () => {
    const line = 'AssertionError: Error in memory profiling. Initial free memory 7.1 GiB, current free memory 6.2 GiB.';
    expect(chooseFix('vllm.memory-profiling', line, base('vllm.memory-profiling'), planContext({ processes: [worker([]), worker([])] }))).toContain('one after another');
    expect(chooseFix('vllm.memory-profiling', line, base('vllm.memory-profiling'))).not.toContain('one after another');
  });

  it('ports: a random port of PyTorch is nobody\'s setting; 29500 is MASTER_PORT; Dynamo\'s own ports by their flags', () => {
    const torch = 'torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 33649, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use';
    const f = chooseFix('net.port-in-use', torch, base('net.port-in-use'), { ours: true });
    expect(f).toContain('port 33649');
    expect(f).toContain('VLLM_PORT');
    expect(f).not.toContain('recipe');
    // In the ephemeral range without a torch word: still picked at random.
    expect(chooseFix('net.port-in-use', 'OSError: [Errno 98] Address already in use: (127.0.0.1, 45123) 127.0.0.1:45123', base('net.port-in-use'))).toContain('picked at start');
    expect(chooseFix('net.port-in-use', 'RuntimeError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use.', base('net.port-in-use'))).toContain('MASTER_PORT');
    const http = '2025-10-13T18:18:46.927697Z ERROR dynamo_llm::http::service::service_v2: Failed to bind server to address protocol=HTTP address=0.0.0.0:8000 error=Address already in use (os error 98)';
    expect(chooseFix('net.port-in-use', http, base('net.port-in-use'))).toContain('--http-port');
    expect(chooseFix('net.port-in-use', http, base('net.port-in-use'), { ours: true })).toContain('--set frontend.httpPort=');
    expect(chooseFix('net.port-in-use', 'OSError: [Errno 98] Address already in use', base('net.port-in-use'), { ours: true })).toBe(base('net.port-in-use'));
  });

  it('reads the port a line names', () => {
    expect(portNamedIn('could not bind to address: 0.0.0.0:8000')).toBe(8000);
    expect(portNamedIn('failed to bind to [::]:29500 (errno: 98)')).toBe(29500);
    expect(portNamedIn('port: 33649, useIpv6: false')).toBe(33649);
    expect(portNamedIn('OSError: [Errno 98] Address already in use')).toBeNull();
  });

  it('a model: gated, a missing path, offline, else the table\'s fix', () => {
    expect(chooseFix('hf.model-not-found', 'huggingface_hub.errors.GatedRepoError: 401 Client Error.', base('hf.model-not-found'))).toContain('hf auth login');
    expect(chooseFix('hf.model-not-found', "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/root/DeepSeek-V2-Lite'. Use `repo_type` argument if needed.", base('hf.model-not-found')))
      .toContain('the folder /root/DeepSeek-V2-Lite does not exist');
    expect(chooseFix('hf.model-not-found', 'huggingface_hub.errors.LocalEntryNotFoundError: ... cannot find the requested files in the local cache.', base('hf.model-not-found'))).toContain('HF_HUB_OFFLINE');
    expect(chooseFix('hf.model-not-found', "OSError: model is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'", base('hf.model-not-found'))).toBe(base('hf.model-not-found'));
  });

  it('UCX, NCCL and discovery fixes name what the line names', () => {
    expect(chooseFix('ucx.error', 'UCX  ERROR no usable transports/devices (asked knem,dc_x,rc on all devices)', base('ucx.error'))).toContain('(knem,dc_x,rc)');
    expect(chooseFix('ucx.error', 'UCX  ERROR Local protection error on mlx5_0:1/RoCE', base('ucx.error'))).toContain('RDMA');
    expect(chooseFix('ucx.error', 'UCX  ERROR something new', base('ucx.error'))).toBe(base('ucx.error'));
    expect(chooseFix('nccl.error', 'RuntimeError: NCCL error: unhandled system error', base('nccl.error'))).toContain('--ipc=host');
    expect(chooseFix('dynamo.discovery-unreachable', 'BuildError(Unable to create lease. Check etcd server status at http://localhost:2379', base('dynamo.discovery-unreachable'))).toContain('start etcd at http://localhost:2379');
    expect(chooseFix('dynamo.discovery-unreachable', 'Exception: Failed to connect to NATS: IO error', base('dynamo.discovery-unreachable'))).toContain('NATS server');
  });

  it('a run record whose plan lacks processes: ours, the rest unknown', () => {
    expect(planContext({} as never)).toEqual({ ours: true });
    expect(planContext(null)).toEqual({ ours: true });
  });
});
