/** List records (getListItems, addListItem, updateListItem, deleteListItem). */

export const recordMethods = [] as const;
