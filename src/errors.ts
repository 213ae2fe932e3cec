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
