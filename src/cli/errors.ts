/** A mistake in the user's input (bad flag, missing file, malformed config): shown as one line, exit code 2. */
export class UserError extends Error {
  override name = 'UserError';
}
