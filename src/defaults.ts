// Defaults said once: the CLI's flags, the recipe schema, the plan's script, doctor and bench read them here.

/** The frontend's HTTP port when a recipe names none (Dynamo's own default, `--http-port 8000`). */
export const DEFAULT_FRONTEND_PORT = 8000;
/** Seconds between SIGTERM and SIGKILL when stopping (up, teardown, restart, bench's teardown). */
export const DEFAULT_GRACE_S = 10;
/** Seconds a run has to become ready (up, bench, the plan's script). */
export const DEFAULT_READY_TIMEOUT_S = 900;

// Bench's load controls are bounded: a typo (1e9) would otherwise plan a load that never ends, and
// AIPerf would open that many connections. One machine, one GPU: far past any useful experiment.
/** The most concurrent requests of one load run (`bench --concurrency`). */
export const BENCH_MAX_CONCURRENCY = 4096;
/** The most concurrency levels of one bench (`--concurrency 1,2,4,...`). */
export const BENCH_MAX_CONCURRENCY_LEVELS = 32;
/** The most requests of one load run (`bench --requests`). */
export const BENCH_MAX_REQUESTS = 1_000_000;
/** The most load runs per variant and concurrency (`bench --repeats`). */
export const BENCH_MAX_REPEATS = 100;
/**
 * The largest `bench --seed` (probe's, commands/probe.ts, has the same bound): 2^32-1. AIPerf 0.13.0 takes any `--random-seed` >= 0
 * (aiperf/config/flags/cli_config.py: `random_seed: int | None`, `Field(ge=0)`), but folds a seed
 * past 2^32-1 into numpy's 32-bit legacy seed (aiperf/common/random_generator.py
 * fold_seed_to_uint32: 2^32 seeds numpy's global state as 1 does), and probe's PRNG (mulberry32)
 * keeps 32 bits: a larger seed would silently repeat a smaller one's prompts. (bench's k-th load
 * run sends seed + k, at most 3,199 more: exact, and still a seed AIPerf takes.)
 */
export const SEED_MAX = 2 ** 32 - 1;
/**
 * The most variants a `--plot` draws (a bar per variant and concurrency in each panel): past this
 * the bars are thinner than a pixel, and resvg took 65 s and 1.2 GB for 3,000 (issue 29). Refused
 * before anything is drawn; the tables show every variant.
 */
export const BENCH_MAX_PLOT_VARIANTS = 64;
