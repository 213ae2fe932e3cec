// Ordinary lines of healthy runs, from the real logs in test/fixtures/samples/logs (a vLLM worker,
// the released Dynamo 1.6.1 frontend and mocker) and vLLM's periodic throughput line (format of
// vllm/v1/metrics/loggers.py, "Engine %03d: Avg prompt throughput: ..."). The needle search picks each needle's
// fingerprints among those these lines hold least (needle-search.ts): the prefix every line of a
// process carries, and words such as "cache", "worker" and "EngineCore", are what a healthy log
// repeats millions of times. Only the speed depends on them, never a result.
export const TYPICAL_LINES: readonly string[] = [
  '2026-10-07T05:12:01.104233Z  INFO dynamo_runtime::distributed: Initializing distributed runtime discovery_backend="file"',
  '2026-10-07T05:12:01.377120Z  INFO main.init: Starting vLLM worker model="Qwen/Qwen3-0.6B" disaggregation_mode="agg"',
  'INFO 10-07 05:12:04 [__init__.py:216] Automatically detected platform cuda.',
  '(EngineCore pid=48211) INFO 10-07 05:12:12 [core.py:644] Waiting for init message from front-end.',
  '(EngineCore pid=48211) INFO 10-07 05:12:16 [gpu_model_runner.py:2653] Model loading took 1.1177 GiB and 2.414716 seconds',
  '(EngineCore pid=48211) INFO 10-07 05:12:18 [gpu_worker.py:298] Available KV cache memory: 1.58 GiB',
  '(EngineCore pid=48211) INFO 10-07 05:12:18 [kv_cache_utils.py:1091] Maximum concurrency for 4,096 tokens per request: 3.62x',
  '(EngineCore pid=48211) INFO 10-07 05:12:19 [core.py:210] init engine (profile, create kv cache, warmup model) took 3.02 seconds',
  '2026-10-07T05:12:20.551902Z  INFO main.init: Registered endpoint dyn://dynamo.backend.generate for model Qwen/Qwen3-0.6B',
  '(APIServer pid=48100) INFO 10-07 05:14:18 [loggers.py:123] Engine 000: Avg prompt throughput: 8804.2 tokens/s, Avg generation throughput: 804.1 tokens/s, Running: 3 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.1%, Prefix cache hit rate: 84.0%',
  '\x1b[2m2026-12-01T06:02:10.885608Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[2mmain.launch_workers\x1b[0m\x1b[2m:\x1b[0m Creating mocker worker 1/1',
  '\x1b[2m2026-12-01T06:02:24.478965Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[2mdynamo_llm::kv_router::embedded\x1b[0m\x1b[2m:\x1b[0m KvRouter scheduling on embedded selection partition \x1b[3mworker_type\x1b[0m\x1b[2m=\x1b[0maggregated',
  '\x1b[2m2026-12-01T06:02:24.478983Z\x1b[0m \x1b[33m WARN\x1b[0m \x1b[2mdynamo_kv_router::sequences::multi_worker\x1b[0m\x1b[2m:\x1b[0m Adding worker WorkerWithDpRank { worker_id: 9719479771209540493, dp_rank: 0 }',
  '\x1b[2m2026-12-01T06:02:24.479413Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[2mdynamo_runtime::transports::event_plane::zmq_transport\x1b[0m\x1b[2m:\x1b[0m ZMQ single-consumer stream connected',
  '\x1b[2m2026-12-01T06:02:24.481239Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[2mdynamo_llm::discovery::model\x1b[0m\x1b[2m:\x1b[0m Adding worker set to model \x1b[3mmodel\x1b[0m\x1b[2m=\x1b[0mtiny',
];
