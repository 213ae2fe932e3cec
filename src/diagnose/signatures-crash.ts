import { BENIGN_ERRORS, exceptionLine, type SignatureSpec } from './signature-spec.js';

// The second half of the finding table (signatures.ts holds the first and the order): crashes of
// the engine and the runtime, then the fallbacks (a Rust panic, an uncaught exception, a bare ERROR
// line) and the healthy KV line. The order matters: a line yields at most one finding, the first
// signature it matches, and these come after every specific cause.

export const CRASH_SIGNATURES: readonly SignatureSpec[] = [
  {
    code: 'nccl.error',
    severity: 'error',
    needles: ['NCCL error', 'ncclUnhandledCuda', 'ncclSystemError', 'ncclInternalError', 'ncclRemoteError', 'ncclInvalid'],
    // torch ProcessGroupNCCL "NCCL error in: FILE:LINE, unhandled cuda error ...", vLLM pynccl_wrapper NCCL_CHECK
    // "NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)". Not the source line that raises it.
    patterns: [/\bNCCL error(?: in)?: (?!\{)/, /\bnccl(?:UnhandledCuda|System|Internal|Remote)Error\b/, /\bncclInvalid(?:Usage|Argument)\b/],
    title: 'NCCL (GPU collective communication) failed',
    explanation:
      'NCCL, which tensor/pipeline-parallel workers use to exchange tensors, failed while setting up or running a collective; ' +
      'the kind is in the quoted line (a CUDA call inside NCCL, a system call such as shared memory or sockets, a remote peer). ' +
      'Details are logged only with NCCL_DEBUG=INFO.',
    fix: 'start again with NCCL_DEBUG=INFO exported and read the NCCL WARN lines before the error',
  },
  {
    code: 'cuda.illegal-address',
    severity: 'error',
    needles: ['illegal memory access', 'cudaErrorIllegalAddress'],
    patterns: [/CUDA error: an illegal memory access was encountered/, /cudaErrorIllegalAddress/],
    title: 'CUDA illegal memory access: a GPU kernel crashed',
    explanation:
      'A GPU kernel read or wrote outside its memory (cudaErrorIllegalAddress). The CUDA context is then unusable and the engine ' +
      'dies; CUDA reports such errors asynchronously, so the Python stack trace may point at an unrelated call. Causes: a kernel ' +
      'bug (attention backend, custom or quantized ops), a torch/vLLM build that does not match the driver, or failing hardware.',
    fix:
      'start again with CUDA_LAUNCH_BLOCKING=1 exported to see the kernel that faulted (slow: for diagnosis only); check the ' +
      'driver and CUDA build with `dynamo-dev doctor --only cuda.compat`; if it repeats, report it to vLLM with the traceback (`dynamo-dev logs PROCESS`)',
  },
  {
    code: 'python.missing-module',
    severity: 'error',
    needles: ['ModuleNotFoundError', 'No module named', 'ImportError'],
    patterns: [
      /ModuleNotFoundError: No module named/,
      // `python -m dynamo.frontend` with a top-level package missing: "/usr/bin/python3: No module named dynamo".
      /^\S*python[\d.]*: No module named \S/,
      exceptionLine('ImportError'),
    ],
    title: 'A Python module is missing or does not load',
    explanation:
      'The interpreter that started the process cannot import a module the process needs: it is not the environment Dynamo and ' +
      'vLLM are installed in (another venv, the system python3), or a package is missing there, or its compiled library does ' +
      'not load (ImportError: libXYZ.so: cannot open shared object file).',
    fix:
      'start with the interpreter of the environment that has Dynamo: --python /path/to/venv/bin/python (or DYNAMO_DEV_PYTHON); ' +
      'check what it imports with `dynamo-dev doctor --only python.env`',
  },
  {
    code: 'vllm.engine-failed',
    severity: 'error',
    needles: ['Engine core initialization failed', 'EngineCore failed to start'],
    patterns: [/Engine core initialization failed/, /EngineCore failed to start/],
    title: 'vLLM engine failed to start',
    explanation: 'The vLLM engine core died during start-up; the root cause is logged above this line (reported separately when it is a known signature).',
    fix: 'read the lines above it in the log (`dynamo-dev logs PROCESS`), then run `dynamo-dev doctor` for GPU, CUDA, memory and UCX problems',
    symptomOf: '*',
  },
  {
    code: 'vllm.engine-dead',
    severity: 'error',
    needles: ['EngineDeadError'],
    patterns: [/EngineDeadError/],
    title: 'vLLM engine core died (a consequence)',
    explanation:
      'The worker found its engine core process dead (vllm.v1.engine.exceptions.EngineDeadError, "See stack trace (above) for the ' +
      'root cause"). The cause is the engine core\'s own error logged above it: reported separately when it is found.',
    fix: 'read the engine core\'s lines above it (`dynamo-dev logs PROCESS --lines 80`), then run `dynamo-dev doctor` for GPU, CUDA and memory problems',
    symptomOf: '*',
  },
  {
    code: 'rust.panic',
    severity: 'error',
    needles: ["' panicked at", '::unwrap()`'],
    // Rust's panic message: `thread 'NAME' panicked at FILE:LINE:COL:` with the message on the next line (Rust >= 1.73),
    // before that `thread 'NAME' panicked at 'MESSAGE', FILE:LINE:COL`; `called `Result::unwrap()` on an `Err` value: ...`.
    patterns: [/\bthread '[^']*' panicked at\b/, /\bcalled `(?:Result|Option)::unwrap\(\)` on an? `(?:Err|None)` value/],
    title: 'A Rust panic in Dynamo\'s runtime (no known signature)',
    explanation:
      'Dynamo\'s Rust core (dynamo-runtime, dynamo-llm, kvbm) panicked: a thread hit an error it does not handle and the process ' +
      'ends (a Python traceback that follows, RustPanic or PanicException, is its consequence). The panic line names the Rust ' +
      'source file and line; the message is on it or on the next line.',
    fix: 'read the line after the quoted one for the panic message (`dynamo-dev logs PROCESS --lines 80`); RUST_BACKTRACE=1 exported shows where it came from; search the message in the Dynamo issue tracker',
    fallback: 1,
  },
  {
    code: 'python.exception',
    severity: 'error',
    needles: ['Error: ', 'Exception: ', 'Error): '],
    patterns: [exceptionLine(String.raw`(?:[A-Z]\w*)?(?:Error|Exception)`)],
    title: 'Uncaught exception (no known signature)',
    explanation:
      'An exception ended the process, or was logged at ERROR level, and no known failure signature explains it. The quoted line ' +
      'is the last exception the engine core logged (else the last one of the process): the root cause, with its traceback above it.',
    fix: 'read the traceback above the quoted line (`dynamo-dev logs PROCESS --lines 80`); check the machine with `dynamo-dev doctor`; search the exception text in the vLLM and Dynamo issue trackers',
    fallback: 2,
    quote: 'last-engine',
  },
  {
    code: 'log.error',
    severity: 'error',
    needles: ['ERROR 0', 'ERROR 1', 'CRITICAL 0', 'CRITICAL 1', 'Z ERROR', '[31mERROR', '[ERROR]', '"ERROR"'],
    // Lines logged at ERROR without an exception class. vLLM's format (logging_utils/formatter.py: `LEVEL MM-DD HH:MM:SS
    // [file.py:N] msg`; no bracket before 0.8); Dynamo's Rust tracing and Python logging (`TIMESTAMP ERROR target: msg`,
    // ANSI red `\x1b[31mERROR`, JSON lines `"level":"ERROR"`); `[ERROR]` after a timestamp. A traceback's frames and
    // headers logged at ERROR are not a cause of their own.
    patterns: [
      new RegExp(String.raw`^(?:ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[^\]\s]+\] (?!Traceback \(most recent call last\)|The above exception|During handling of the above|\^)\S`),
      // Not what healthy Dynamo frontends log at ERROR (test/dynamo on the released 1.3.1 and 1.6.1): after "Runtime
      // shutdown initiated", the runtime's tasks whose channel closed ("Failed to send file watch event error=channel
      // closed" and "KeyValueStoreManager.watch failed ... err=channel closed" on 1.3.1, "monitor_instance_source: The
      // Sender is dropped: channel closed" on 1.6.1); and the access line of a 4xx answer ("http response sent
      // status=404"), a client's error, not the process's.
      new RegExp(String.raw`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ERROR +(?!${BENIGN_ERRORS.join('|')})\S`),
      /^(?:\S+ )?\[ERROR\] \S/,
    ],
    title: 'An error was logged (no known signature)',
    explanation:
      'A line was logged at ERROR level and no known failure signature explains the file. The quoted line is the first such ' +
      'line: the errors that follow it are usually its consequences.',
    fix: 'read the lines around the quoted one (`dynamo-dev logs PROCESS --lines 80`); check the machine with `dynamo-dev doctor`; search the message in the vLLM and Dynamo issue trackers',
    fallback: 3,
  },
  {
    code: 'vllm.kv-size',
    severity: 'info',
    // The CPU build says `CPU KV cache size` (vllm/v1/core/kv_cache_utils.py: device_type.upper(); FACTS §10).
    needles: ['GPU KV cache size', 'CPU KV cache size'],
    patterns: [/[GC]PU KV cache size: [\d,]+ tokens/],
    title: 'KV cache allocated',
    explanation: 'vLLM allocated its KV cache and reported how many tokens it holds (the worker got past memory profiling).',
    fix: 'nothing to fix; each worker needs at least max-model-len tokens (`dynamo-dev doctor --only kv.allocated`)',
  },
];
