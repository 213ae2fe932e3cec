/** Exit codes (CLI.md): 0 success, 1 the job failed, 2 the user's input is wrong, 130 interrupted before done (128 + SIGINT). */
export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;

/** An error the user can fix (bad flag, bad recipe, plan that cannot fit): one line, exit 2. */
export class UserError extends Error {
  readonly exitCode = 2;
  constructor(
    message: string,
    /** A concrete way out, printed after the message when present. */
    readonly fix?: string,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

export function isUserError(err: unknown): err is UserError {
  return err instanceof UserError;
}

/**
 * A write that failed because the filesystem is full (ENOSPC) or the user's quota is spent
 * (EDQUOT). Node's error names the syscall, not the file (`ENOSPC: no space left on device,
 * write`): this one names the file and the way out. Exit 1: the job failed, the input was fine.
 */
export class DiskFullError extends Error {
  constructor(readonly path: string, readonly code: string) {
    super(
      `cannot write ${path}: ${code === 'EDQUOT' ? 'disk quota exceeded' : 'no space left on device'} (${code}); ` +
        `free space on that filesystem (df -h ${path.replace(/\/[^/]*$/, '') || '/'}) or use a state directory on another one (--state-dir DIR or DYNAMO_DEV_HOME=DIR)`,
    );
    this.name = 'DiskFullError';
  }
}

/** `err` as a DiskFullError naming `path` when it is a full disk or quota; otherwise `err` itself. */
export function asDiskFull(err: unknown, path: string): unknown {
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT' ? new DiskFullError(path, code) : err;
}
