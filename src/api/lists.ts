/** List schemas (getListSchemas, getListSchema, createListSchema, deleteListSchema, addListSchemaField, deleteListSchemaField). */
import { z } from 'zod';
import { defineMethod, READ, type Annotations } from './define.js';
import { r } from './rules.js';
import { paginated, Timestamp } from './shapes.js';

/** The field types a list may hold. */
export const FIELD_TYPES = ['string', 'number', 'bool', 'date', 'datetime', 'money', 'file', 'image', 'contact', 'bot'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/**
 * Slugs a field may not take: the record's own keys, the record id parameter, and
 * `__proto__` (a key that JSON objects in JavaScript cannot carry safely). Compared
 * case-insensitively.
 */
export const RESERVED_SLUGS = ['id', 'schema_id', 'item_id', 'created_at', 'updated_at', 'deleted_at', '__proto__'] as const;

/** Whether `slug` is one of the reserved names. */
export function isReservedSlug(slug: string): boolean {
  return (RESERVED_SLUGS as readonly string[]).includes(slug.toLowerCase());
}

/** Lists a project may hold. */
export const MAX_LISTS_PER_PROJECT = 5000;
/** getListSchemas page size, fixed. */
export const LIST_PAGE_SIZE = 50;

export const FieldDefSchema = z.object({
  name: z.string(),
  type: z.enum(FIELD_TYPES),
  currency: z.string().optional().describe('Only for money fields: ISO 4217 code'),
  is_required: z.boolean(),
  is_hidden: z.boolean(),
  is_encryptable: z.boolean(),
});
export type FieldDef = z.infer<typeof FieldDefSchema>;

export const ListSchemaSchema = z.object({
  id: z.string(),
  fields: z
    .record(z.string(), FieldDefSchema)
    .describe('Field slug → field definition, in the order the fields were created ([] when the list has no field)'),
  name: z.string(),
  bot_id: z.number().int().nullable(),
  project: z.string(),
  is_menu: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type ListSchema = z.infer<typeof ListSchemaSchema>;

const SLUG_NOTE = `letters of any script, digits, "-" and "_", up to 255 characters, unique within the list, not one of: ${RESERVED_SLUGS.join(', ')}`;

const fieldShape = {
  name: r.string().required().max(255).describe('Field name shown to people, up to 255 characters'),
  slug: r.alphaDash().required().max(255).describe(`Field key in records: ${SLUG_NOTE}`),
  type: r.oneOf(FIELD_TYPES).required().describe(`Value type: ${FIELD_TYPES.join(', ')}`),
  is_required: r.boolean().describe('Whether every new record must fill it; default true'),
  is_hidden: r.boolean().describe('Hide the field in the interface; default false'),
  is_encryptable: r.boolean().describe('Store values encrypted at rest; default false. Encrypted fields cannot be filtered or sorted'),
};

const schemaId = r.string().required().max(255).describe('List ID (a string, from createListSchema or getListSchemas)');

const WRITE: Annotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
const DESTROY: Annotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

export const getListSchemas = defineMethod({
  name: 'getListSchemas',
  verbs: ['GET', 'POST'],
  status: 200,
  title: 'List all lists',
  description:
    'Returns the lists (list schemas with their fields) of every project the key holder owns, oldest first, 50 per page (fixed). ' +
    'Lists of projects the holder was only invited to are not included. Follow links.next or pass page to read further pages.',
  params: {
    page: r.any().advertise('integer').describe('Page number from 1 (default 1); anything but a positive integer reads page 1'),
  },
  result: paginated(ListSchemaSchema),
  annotations: READ,
});

export const getListSchema = defineMethod({
  name: 'getListSchema',
  verbs: ['GET', 'POST'],
  status: 200,
  title: 'Get a list',
  description:
    'Returns one list schema by its ID: name, project, bot, and its fields (slug → name, type, currency, flags) in field order. ' +
    'Use it before adding records to learn the slugs, types and required fields.',
  params: { schema_id: schemaId },
  result: z.object({ data: ListSchemaSchema }),
  annotations: READ,
});

export const createListSchema = defineMethod({
  name: 'createListSchema',
  verbs: ['GET', 'POST'],
  status: 201,
  title: 'Create a list',
  description:
    'Creates a list (a named set of typed fields, like a table) in one of the holder\'s projects, or in a bot (then the list goes to the bot\'s project and bot_id is kept). ' +
    'Give project_uuid or bot_id; if both, bot_id is used. 1 to 30 fields, kept in the order sent; ' +
    `field types: ${FIELD_TYPES.join(', ')}; money fields take an ISO 4217 currency (default USD). ` +
    `At most ${MAX_LISTS_PER_PROJECT} lists per project. Returns the new list with its ID.`,
  params: {
    name: r.string().required().max(255).describe('List name, up to 255 characters'),
    project_uuid: r.string().requiredWithout('bot_id').describe('UUID of the holder\'s project; required without bot_id'),
    bot_id: r.integer().requiredWithout('project_uuid').describe('ID of the holder\'s bot; required without project_uuid; wins over project_uuid'),
    fields: r
      .array(
        r.object({
          ...fieldShape,
          currency: r.string().describe('Only for money: ISO 4217 code in capitals (USD, EUR, JPY); default USD'),
        }),
      )
      .required()
      .between(1, 30)
      .describe('The fields, 1 to 30, in the order they should appear'),
    is_menu: r.boolean().describe('Outdated flag, stored and returned; has no effect'),
  },
  result: z.object({ data: ListSchemaSchema }),
  annotations: WRITE,
  checkWith: 'getListSchemas',
  changesLists: true,
});

export const deleteListSchema = defineMethod({
  name: 'deleteListSchema',
  verbs: ['GET', 'POST'],
  status: 204,
  title: 'Delete a list',
  description:
    'Deletes a list and every record in it, irreversibly. Afterwards the list and its records answer 404. Returns no body.',
  params: { schema_id: schemaId },
  result: null,
  annotations: DESTROY,
  checkWith: 'getListSchema',
  changesLists: true,
});

export const addListSchemaField = defineMethod({
  name: 'addListSchemaField',
  verbs: ['GET', 'POST'],
  status: 204,
  title: 'Add a field to a list',
  description:
    'Appends one field at the end of a list. Existing records do not change (the new field reads null in them); ' +
    'if the field is required, every later addListItem must fill it. Money fields need a currency. Returns no body.',
  params: {
    schema_id: schemaId,
    field: r
      .object({
        ...fieldShape,
        currency: r.string().describe('Required for money: ISO 4217 code in capitals (USD, EUR, JPY)'),
      })
      .required()
      .describe('The new field'),
  },
  result: null,
  annotations: WRITE,
  checkWith: 'getListSchema',
});

export const deleteListSchemaField = defineMethod({
  name: 'deleteListSchemaField',
  verbs: ['GET', 'POST'],
  status: 204,
  title: 'Delete a field from a list',
  description:
    'Deletes a field from a list and erases its values in every record of the list, irreversibly. Returns no body.',
  params: {
    schema_id: schemaId,
    slug: r.string().required().max(255).describe('Slug of the field to delete'),
  },
  result: null,
  annotations: DESTROY,
  checkWith: 'getListSchema',
});

export const listMethods = [
  getListSchemas,
  getListSchema,
  createListSchema,
  deleteListSchema,
  addListSchemaField,
  deleteListSchemaField,
] as const;
