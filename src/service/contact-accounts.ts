/** Handlers: Contact accounts and their journal. */

export const contactAccountHandlers = {};
