/** A mistake in the command line itself (exit code 2), as opposed to a refused or failed call (1). */
export class UsageError extends Error {}
