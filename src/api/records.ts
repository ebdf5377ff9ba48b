/** List records (getListItems, addListItem, updateListItem, deleteListItem). */
import { z } from 'zod';
import { defineMethod, READ } from './define.js';
import { r } from './rules.js';
import { paginated, Timestamp } from './shapes.js';

/** Text values: up to this many characters. */
export const MAX_TEXT_LENGTH = 65535;

export const RecordSchema = z
  .object({
    id: z.string(),
    schema_id: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .catchall(z.unknown())
  .describe('A record: its own keys, then one key per field slug in field order, null where unset');
export type ListRecord = z.infer<typeof RecordSchema>;

const VALUES_NOTE =
  'Values by field type: string (text up to 65535), number (integer or decimal), bool (true/false/1/0), date (YYYY-MM-DD), ' +
  'datetime (ISO 8601, returned in UTC), money (integer minor units of the field currency: 1050 = 10.50 USD), ' +
  'file and image (http or https URL), contact (ID of one of your contacts), bot (ID of one of your bots).';

export const getListItems = defineMethod({
  name: 'getListItems',
  verbs: ['GET', 'POST'],
  status: 200,
  title: 'List records of a list',
  description:
    'Returns the records of a list, paginated (limit 1-1000, default 20), ordered by order_by (default id,asc = creation order). ' +
    'filters matches fields by equality ({"slug": value}); bot_id / contact_id keep records whose bot / contact field holds that ID. ' +
    'Encrypted fields cannot be filtered or sorted on. Call getListSchema first to learn the slugs.',
  params: {
    schema_id: r.string().required().max(255).describe('List ID'),
    page: r.any().advertise('integer').describe('Page number from 1 (default 1)'),
    limit: r.integer().between(1, 1000).describe('Records per page, 1 to 1000, default 20'),
    order_by: r
      .string()
      .max(300)
      .describe('"<slug|created_at|id>,<asc|desc>", e.g. "price,desc"; default "id,asc"; the direction may be left out (asc)'),
    filters: r.any().advertise('object').describe('Equality filters: an object {"<slug>": value, ...} (or its JSON text); all must match'),
    bot_id: r.integer().describe('Only records with a bot field holding this bot ID'),
    contact_id: r.integer().describe('Only records with a contact field holding this contact ID'),
  },
  result: paginated(RecordSchema),
  annotations: READ,
  paging: { smaller: 'limit' },
});

export const addListItem = defineMethod({
  name: 'addListItem',
  verbs: ['POST'],
  status: 201,
  title: 'Add a record to a list',
  description:
    'Adds a record to a list. data maps field slugs to values; every required field must be given; unknown slugs are refused. ' +
    VALUES_NOTE +
    ' Returns the record with its new ID.',
  params: {
    schema_id: r.string().required().max(255).describe('List ID'),
    data: r.map().required().describe('Field values by slug'),
  },
  result: z.object({ data: RecordSchema }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  checkWith: 'getListItems',
});

export const updateListItem = defineMethod({
  name: 'updateListItem',
  verbs: ['POST'],
  status: 200,
  title: 'Update a record',
  description:
    'Changes the given fields of a record; fields not in data keep their values. A null value clears an optional field. ' +
    VALUES_NOTE +
    ' Returns the whole record.',
  params: {
    item_id: r.string().required().max(255).describe('Record ID'),
    data: r.map().required().describe('Field values by slug; only these change'),
  },
  result: z.object({ data: RecordSchema }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  checkWith: 'getListItems',
});

export const deleteListItem = defineMethod({
  name: 'deleteListItem',
  verbs: ['POST'],
  status: 204,
  title: 'Delete a record',
  description: 'Deletes one record of a list, irreversibly. Returns no body.',
  params: {
    item_id: r.string().required().max(255).describe('Record ID'),
  },
  result: null,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  checkWith: 'getListItems',
});

export const recordMethods = [getListItems, addListItem, updateListItem, deleteListItem] as const;
