/** A start-up problem: one line naming it and the fix (the CLI exits with status 2). Its own module, so that the CLI loads it without the store. */
export class StartError extends Error {}
