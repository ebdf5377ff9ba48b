/** List records (getListItems, addListItem, updateListItem, deleteListItem). */
import { z } from 'zod';
import { defineMethod, DESTROY, IDEMPOTENT_WRITE, READ, WRITE } from './define.js';
import { page, stringId } from './params.js';
import { r } from './rules.js';
import { paginated, Timestamp } from './shapes.js';

/** Text values: up to this many characters. */
export const MAX_TEXT_LENGTH = 65535;

const RecordSchema = z
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
  'Values by slug. By field type: string (up to 65535 characters), number, bool, date (YYYY-MM-DD), datetime (ISO 8601), ' +
  'money (minor units of the field currency), file and image (http(s) URL), contact or bot (an id of yours)';

export const getListItems = defineMethod({
  name: 'getListItems',
  title: 'List records of a list',
  description: 'The records of a list, a page at a time. Encrypted fields cannot be filtered or sorted on. getListSchema tells the slugs.',
  params: {
    schema_id: stringId,
    page,
    limit: r.integer().between(1, 1000).describe('Default 20'),
    order_by: r.string().max(300).describe('"<slug|created_at|id>[,asc|desc]", default "id,asc"'),
    filters: r.any().advertise('object').describe('{"<slug>": value}: all must be equal'),
    bot_id: r.integer().describe('Records whose bot field holds this bot'),
    contact_id: r.integer().describe('Records whose contact field holds this contact'),
  },
  result: paginated(RecordSchema),
  annotations: READ,
  paging: { size: 'limit' },
});

export const addListItem = defineMethod({
  name: 'addListItem',
  status: 201,
  title: 'Add a record to a list',
  description: 'Adds a record to a list: every required field given, no unknown slug.',
  params: {
    schema_id: stringId,
    data: r.map().required().describe(VALUES_NOTE),
  },
  result: z.object({ data: RecordSchema }),
  annotations: WRITE,
  checkWith: { method: getListItems },
});

export const updateListItem = defineMethod({
  name: 'updateListItem',
  title: 'Update a record',
  description: 'Changes the given fields of a record (null clears an optional one); the rest keep their values.',
  params: {
    item_id: stringId,
    data: r.map().required().describe('Values by slug, as addListItem takes them'),
  },
  result: z.object({ data: RecordSchema }),
  annotations: IDEMPOTENT_WRITE,
  checkWith: { method: getListItems },
});

export const deleteListItem = defineMethod({
  name: 'deleteListItem',
  title: 'Delete a record',
  description: 'Deletes one record of a list, irreversibly.',
  params: {
    item_id: stringId,
  },
  result: null,
  annotations: DESTROY,
  checkWith: { method: getListItems },
});

export const recordMethods = [getListItems, addListItem, updateListItem, deleteListItem] as const;
