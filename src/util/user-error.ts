// UserError: a mistake or an unmet precondition the user can fix. The CLI prints its message as
// one line and exits non-zero, never with a stack trace; any other error is a bug and is shown
// whole.
export class UserError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = 'UserError';
  }
}
