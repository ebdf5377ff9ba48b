/** List schemas (getListSchemas, getListSchema, createListSchema, deleteListSchema, addListSchemaField, deleteListSchemaField). */
import { z } from 'zod';
import { defineMethod, DESTROY, READ, WRITE } from './define.js';
import { page, stringId } from './params.js';
import { r } from './rules.js';
import { paginated, Timestamp } from './shapes.js';

/** The field types a list may hold. */
const FIELD_TYPES = ['string', 'number', 'bool', 'date', 'datetime', 'money', 'file', 'image', 'contact', 'bot'] as const;
type FieldType = (typeof FIELD_TYPES)[number];

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

const FieldDefSchema = z.object({
  name: z.string(),
  type: z.enum(FIELD_TYPES),
  currency: z.string().optional().describe('Only for money fields: ISO 4217 code'),
  is_required: z.boolean(),
  is_hidden: z.boolean(),
  is_encryptable: z.boolean(),
});
export type FieldDef = z.infer<typeof FieldDefSchema>;

const ListSchemaSchema = z.object({
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
type ListSchema = z.infer<typeof ListSchemaSchema>;

const SLUG_NOTE = `Key in records, unique in the list; not ${RESERVED_SLUGS.join(', ')}`;

const fieldShape = {
  name: r.string().required().max(255).describe('Shown to people'),
  slug: r.alphaDash().required().max(255).describe(SLUG_NOTE),
  type: r.oneOf(FIELD_TYPES).required(),
  is_required: r.boolean().describe('Default true: every addListItem must fill it'),
  is_hidden: r.boolean().describe('Default false'),
  is_encryptable: r.boolean().describe('Then not filterable or sortable; default false'),
};

export const getListSchemas = defineMethod({
  name: 'getListSchemas',
  title: 'List all lists',
  description:
    'The lists (list schemas with their fields) of every project you own, oldest first, 50 a page; not those of projects you were ' +
    'only invited to.',
  params: {
    page,
  },
  result: paginated(ListSchemaSchema),
  annotations: READ,
});

export const getListSchema = defineMethod({
  name: 'getListSchema',
  title: 'Get a list',
  description: 'One list: name, project, bot and its fields (slug → name, type, currency, flags) in order; read it before adding records.',
  params: { schema_id: stringId },
  result: z.object({ data: ListSchemaSchema }),
  annotations: READ,
});

export const createListSchema = defineMethod({
  name: 'createListSchema',
  verbs: ['GET', 'POST'],
  status: 201,
  title: 'Create a list',
  description:
    "Creates a list (a named set of typed fields, like a table) in a project, or in a bot (bot_id wins; the list goes to the bot's project). " +
    `At most ${MAX_LISTS_PER_PROJECT} lists a project. ` +
    'A field is required unless is_required: false.',
  params: {
    name: r.string().required().max(255),
    project_uuid: r.string().requiredWithout('bot_id').describe('Required without bot_id'),
    bot_id: r.integer().requiredWithout('project_uuid').describe('Required without project_uuid'),
    fields: r
      .array(
        r.object({
          ...fieldShape,
          currency: r.string().describe('Money fields: ISO 4217 code in capitals; default USD'),
        }),
      )
      .required()
      .between(1, 30)
      .describe('In display order'),
    is_menu: r.boolean().describe('Outdated; no effect'),
  },
  result: z.object({ data: ListSchemaSchema }),
  annotations: WRITE,
  checkWith: { method: getListSchemas },
  changesLists: true,
});

export const deleteListSchema = defineMethod({
  name: 'deleteListSchema',
  verbs: ['GET', 'POST'],
  title: 'Delete a list',
  description: 'Deletes a list and all its records, irreversibly.',
  params: { schema_id: stringId },
  result: null,
  annotations: DESTROY,
  checkWith: { method: getListSchema },
  changesLists: true,
});

export const addListSchemaField = defineMethod({
  name: 'addListSchemaField',
  verbs: ['GET', 'POST'],
  title: 'Add a field to a list',
  description:
    'Appends a field to a list, required unless is_required: false. ' +
    'Existing records read null in it; a required one must be filled by every later addListItem.',
  params: {
    schema_id: stringId,
    field: r
      .object({
        ...fieldShape,
        currency: r.string().describe('Required for money fields: ISO 4217 code in capitals'),
      })
      .required(),
  },
  result: null,
  annotations: WRITE,
  checkWith: { method: getListSchema },
});

export const deleteListSchemaField = defineMethod({
  name: 'deleteListSchemaField',
  verbs: ['GET', 'POST'],
  title: 'Delete a field from a list',
  description: 'Deletes a field from a list and its values in every record, irreversibly.',
  params: {
    schema_id: stringId,
    slug: r.string().required().max(255),
  },
  result: null,
  annotations: DESTROY,
  checkWith: { method: getListSchema },
});

export const listMethods = [
  getListSchemas,
  getListSchema,
  createListSchema,
  deleteListSchema,
  addListSchemaField,
  deleteListSchemaField,
] as const;
