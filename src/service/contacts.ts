/** Handlers: Contacts: export, count, create or update. */

export const contactHandlers = {};
