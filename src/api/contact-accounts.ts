/** Contact accounts (getContactAccounts, addContactAccount, deleteContactAccount, addFundsToContactAccount, withdrawFundsFromContactAccount). */

export const contactAccountMethods = [] as const;
