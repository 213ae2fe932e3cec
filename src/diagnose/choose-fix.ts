// A finding's fix chosen by what its quoted line and the run show (pure). The signature table's fix
// is the default; where the evidence says more (which port, whose port, how much memory is free, a
// gated model, an RDMA device), the fix says that instead, and recipe advice (--set ...,
// startup: sequential) is given only for a log of a dynamo-dev run whose plan makes it true.

/** What is known of the process that wrote the log. Empty: a log from anywhere (not a dynamo-dev run). */
export interface FixContext {
  /** The log belongs to a dynamo-dev run: recipe settings (--set ...) apply. */
  ours?: boolean;
  /** Workers of that run sharing the GPU. */
  workersOnGpu?: number;
  /** Those workers were started together, not one after another. */
  parallelStart?: boolean;
}

/** The context of a run's plan (the fields read from it; runs recorded before a field existed lack it). */
export function planContext(plan: { processes?: readonly { gpuMemoryUtilization?: number | null; waitFor?: readonly string[] }[] } | null | undefined): FixContext {
  // run.json's plan is checked loosely (an older or hand-edited record): what it lacks stays unknown.
  if (!plan || !Array.isArray(plan.processes)) return { ours: true };
  const gpu = plan.processes.filter((p) => typeof p.gpuMemoryUtilization === 'number');
  return { ours: true, workersOnGpu: gpu.length, parallelStart: gpu.length > 1 && gpu.slice(1).some((p) => (p.waitFor ?? []).length === 0) };
}

const TEARDOWN = '`dynamo-dev teardown --orphans`';

/** Several workers of our run on one GPU, started together: what vLLM's memory checks trip over. */
const startedTogether = (ctx: FixContext) => ctx.ours === true && (ctx.workersOnGpu ?? 0) > 1 && ctx.parallelStart === true;

// Linux's default ephemeral range (net.ipv4.ip_local_port_range, Documentation/networking/ip-sysctl.rst):
// the ports the kernel hands out for bind(port 0), as vLLM's get_open_port() and torch's init_process_group do.
const EPHEMERAL = [32768, 60999] as const;
/** PyTorch's default MASTER_PORT (torch/distributed/run.py --master-port). */
const TORCH_MASTER_PORT = 29500;
const TORCH_RENDEZVOUS = /DistNetworkError|server socket has failed|\[c10d\]|TCPStore|init_process_group|get_open_port|MASTER_PORT/;
const DYNAMO_HTTP = /could not bind to address|protocol=HTTP|service_v2|HTTP service/;
const DYNAMO_SYSTEM = /system_status_server|System status server|DYN_SYSTEM_PORT/;

/** The port a line names (`port: 33649`, `0.0.0.0:8000`, `[::]:29500`); null when none. */
export function portNamedIn(text: string): number | null {
  const m = /\bport:? (\d{2,5})\b/.exec(text) ?? /(?:\d+\.\d+\.\d+\.\d+|\blocalhost|\]|::):(\d{2,5})\b/.exec(text);
  const n = m ? Number(m[1]) : NaN;
  return n > 0 && n < 65536 ? n : null;
}

function portFix(text: string, base: string, ctx: FixContext): string {
  const port = portNamedIn(text);
  const holder = port ? `\`ss -ltnp 'sport = :${port}'\`` : '`ss -ltnp`';
  if (port === TORCH_MASTER_PORT && TORCH_RENDEZVOUS.test(text)) {
    return `port ${port} is PyTorch's default MASTER_PORT: another distributed job on this machine holds it (find it with ${holder}); give this one a free port: export MASTER_PORT=<free port>`;
  }
  if (TORCH_RENDEZVOUS.test(text) || (port !== null && port >= EPHEMERAL[0] && port <= EPHEMERAL[1])) {
    // vllm/envs.py VLLM_PORT: the first port vLLM's get_open_port() tries for its distributed setup.
    return `${port ? `port ${port} was` : 'the port was'} picked at start for PyTorch's/vLLM's process group and another process took it first (no configured port of yours): start again; if it repeats, find what holds the ports with \`ss -ltnp\`, or give vLLM a fixed free port: export VLLM_PORT=<free port>`;
  }
  const stop = `find the holder with ${holder} and stop it (a leftover process of an earlier run: ${TEARDOWN})`;
  if (DYNAMO_HTTP.test(text)) {
    return `${stop}, or ${ctx.ours ? 'move the recipe\'s port (--set frontend.httpPort=<free port>)' : 'start the frontend on another port (--http-port)'}; check with \`dynamo-dev doctor --only ports.free\``;
  }
  if (DYNAMO_SYSTEM.test(text)) {
    return `${stop}, or ${ctx.ours ? 'move the recipe\'s ports (ports.*)' : 'set DYN_SYSTEM_PORT to a free port'}; check with \`dynamo-dev doctor --only ports.free\``;
  }
  return ctx.ours ? base : `${stop}, or start the process on another port`;
}

const GIB = String.raw`(\d+(?:\.\d+)?)`;
const FREE = new RegExp(String.raw`\(${GIB}/${GIB} GiB\) on startup is less than desired GPU memory utilization \((\d*\.?\d+), ${GIB} GiB\)`);
const round2 = (x: number) => Math.round(x * 100) / 100;

/** The largest fraction (two decimals) that fits in `free` of `total` with a little room. */
export const fittingFraction = (free: number, total: number): number => Math.max(0.01, Math.floor((free / total) * 100 - 1) / 100);

function freeMemoryFix(text: string, base: string, ctx: FixContext): string {
  if (startedTogether(ctx)) return base;
  const m = FREE.exec(text);
  if (!m) return ctx.ours ? base : `find what else holds memory on this GPU with \`nvidia-smi\` and stop it (leftover engine processes: ${TEARDOWN}), or lower --gpu-memory-utilization`;
  const [free, total, asked] = [Number(m[1]), Number(m[2]), Number(m[4])];
  const fit = fittingFraction(free, total);
  const held = `${round2(total - free)} GiB of its ${total} GiB`;
  const lower = ctx.ours ? `--set workers.0.gpuMemoryUtilization=${fit}` : `--gpu-memory-utilization ${fit}`;
  const sum = ctx.ours && (ctx.workersOnGpu ?? 0) > 1 ? '; the fractions of all workers on the GPU must sum to what is free' : '';
  return `something else holds ${held} on this GPU (${free} GiB were free, the worker asked for ${asked} GiB): find it with \`nvidia-smi\` and stop it (leftover engine processes of an earlier run: ${TEARDOWN}), or ask for what is free: ${lower}${sum}`;
}

function memoryProfilingFix(base: string, ctx: FixContext): string {
  return startedTogether(ctx) ? base
    : `make sure nothing else starts, stops or allocates on this GPU while the worker starts (see \`nvidia-smi\`; leftover engine processes: ${TEARDOWN}), then start it again`;
}

function oomFix(base: string, ctx: FixContext): string {
  return ctx.ours ? base
    : `find what else holds memory on this GPU with \`nvidia-smi\` (leftover engine processes: ${TEARDOWN}), then lower vLLM's memory: --gpu-memory-utilization, --max-model-len or --max-num-seqs`;
}

function modelFix(text: string, base: string): string {
  if (/GatedRepoError|gated repo|is restricted|is gated/.test(text)) {
    return 'the model is gated: accept its terms on its page (https://huggingface.co/MODEL) with your account, then log in on this machine: `hf auth login` (or export HF_TOKEN)';
  }
  if (/LocalEntryNotFoundError|(?:local|disk) cache/.test(text)) {
    return 'the model is not in the local cache and the hub could not be reached: download it where the hub is reachable (`hf download MODEL`), or check the network, proxy and HF_ENDPOINT; with HF_HUB_OFFLINE=1 only cached models load';
  }
  const path = /'((?:\/|\.\/|~\/)[^']*)'/.exec(text) ?? /(?:^|\s|: )((?:\/|\.\/|~\/)\S+) is not a local folder/.exec(text);
  if (path) {
    return `the folder ${path[1]} does not exist on this machine (so it was taken for a hub id): check the path (a model folder holds config.json and the tokenizer files); in a container, mount it`;
  }
  return base;
}

function ucxFix(text: string, base: string): string {
  const asked = /\(asked ([^)]*?) on /.exec(text);
  if (/no usable transports|is not available/.test(text)) {
    // UCX's WARN line just before names what it has ("please use one or more of: cma, mm, ..."); ucx_info
    // may be another UCX than NIXL's own (its wheel bundles UCX 1.22.0 and no ucx_info: FACTS §11).
    return `UCX_TLS asks for transports this machine does not have${asked ? ` (${asked[1]})` : ''}: unset UCX_TLS, or list only transports it has (UCX's warning just before this line names them; e.g. UCX_TLS=sm,self,tcp); check with \`dynamo-dev doctor --only ucx.transports\`, which runs NIXL for real`;
  }
  if (/ibv_|mlx5|RoCE|erdma|\bUD\b|_verbs|\bQP\b/.test(text)) {
    return 'an RDMA (InfiniBand/RoCE) device failed: check it with `ibv_devinfo`; pick a working one with UCX_NET_DEVICES=<device>, or leave RDMA out: UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp (enough on one machine)';
  }
  if (/can listen/.test(text)) {
    return 'no UCX transport can listen on the address in the quoted line: check that the interface exists and that UCX_TLS includes tcp (`ucx_info -d`)';
  }
  return base;
}

/**
 * "no active messages transport ... sysv/memory - no peer failure handler" (the real NIXL 1.4.1 with
 * UCX_TLS=shm,self or ^tcp, test/fixtures/nixl): shared memory is there but lacks the peer failure
 * handling NIXL asks for; UCX_MM_ERROR_HANDLING=y turns it on (checked for real: the probe then passes).
 */
function noAmFix(text: string, base: string): string {
  if (/\b(?:sysv|posix)\/\S+ - no peer failure handler/.test(text)) {
    return 'shared memory lacks the peer failure handling NIXL asks for: export UCX_MM_ERROR_HANDLING=y, or add tcp to UCX_TLS (e.g. UCX_TLS=shm,self,tcp), or unset UCX_TLS; check with `dynamo-dev doctor --only ucx.transports`, which runs NIXL for real';
  }
  return base;
}

function ncclFix(text: string, base: string): string {
  if (/unhandled cuda error/i.test(text)) {
    return 'a CUDA call inside NCCL failed: start again with NCCL_DEBUG=INFO exported to see which; when it is GPU peer-to-peer, NCCL_P2P_DISABLE=1 works around it; check the driver with `dynamo-dev doctor`';
  }
  if (/unhandled system error/i.test(text)) {
    return 'a system call inside NCCL failed (shared memory or sockets): in a container give it shared memory (--ipc=host or --shm-size=16g); NCCL_DEBUG=INFO names the call';
  }
  return base;
}

function discoveryFix(text: string, base: string): string {
  const url = /(https?:\/\/[^\s"\]]+)/.exec(text)?.[1];
  const files = 'or run on one machine without it: file discovery with the TCP request plane and ZMQ events (dynamo-dev\'s recipes: discovery: file)';
  if (/NATS/.test(text)) return `start a NATS server (nats-server -js) where NATS_SERVER points, ${files}`;
  if (/etcd|lease/.test(text)) return `start etcd${url ? ` at ${url}` : ''} (or point ETCD_ENDPOINTS at it), ${files}`;
  return base;
}

/** The fix for a finding of `code` quoting `text` (`base`: the signature's own fix). */
export function chooseFix(code: string, text: string, base: string, ctx: FixContext = {}): string {
  switch (code) {
    case 'net.port-in-use': return portFix(text, base, ctx);
    case 'vllm.free-memory': return freeMemoryFix(text, base, ctx);
    case 'vllm.memory-profiling': return memoryProfilingFix(base, ctx);
    case 'cuda.oom': return oomFix(base, ctx);
    case 'hf.model-not-found': return modelFix(text, base);
    case 'ucx.error': return ucxFix(text, base);
    case 'ucx.no-am-transport': return noAmFix(text, base);
    case 'nccl.error': return ncclFix(text, base);
    case 'dynamo.discovery-unreachable': return discoveryFix(text, base);
    default: return base;
  }
}
