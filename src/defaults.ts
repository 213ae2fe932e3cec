// Defaults said once: the CLI's flags, the recipe schema, the plan's script, doctor and bench read them here.

/** The frontend's HTTP port when a recipe names none (Dynamo's own default, `--http-port 8000`). */
export const DEFAULT_FRONTEND_PORT = 8000;
/** Seconds between SIGTERM and SIGKILL when stopping (up, teardown, restart, bench's teardown). */
export const DEFAULT_GRACE_S = 10;
/** Seconds a run has to become ready (up, bench, the plan's script). */
export const DEFAULT_READY_TIMEOUT_S = 900;
