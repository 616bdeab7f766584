/** A mistake in how the command was called: the CLI prints it with the usage and exits 2. */
export class UsageError extends Error {}
