/** Contacts (getContacts, getNumberOfContacts, createOrUpdateContact). */

export const contactMethods = [] as const;
