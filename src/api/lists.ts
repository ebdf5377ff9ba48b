/** List schemas (getListSchemas, getListSchema, createListSchema, deleteListSchema, addListSchemaField, deleteListSchemaField). */

export const listMethods = [] as const;
