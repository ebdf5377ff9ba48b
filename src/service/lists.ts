/** Handlers: List schemas and list records. */

export const listHandlers = {};
