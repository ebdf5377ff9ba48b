/**
 * Contact variables (shape from the service's public docs): getContactVariables,
 * setContactVariable, deleteContactVariable. Variables named `utm_*` are the contact's `utm`.
 */
import { z } from 'zod';
import { defineMethod, READ } from './define.js';
import { r } from './rules.js';

/** Longest variable name and value, in characters (ours). */
export const MAX_VARIABLE_NAME = 255;
export const MAX_VARIABLE_VALUE = 65_535;

export const VariableSchema = z.object({
  id: z.number().int().describe('Variable ID; pass it to deleteContactVariable as id'),
  name: z.string(),
  value: z
    .string()
    .nullable()
    .describe('The value; for a media variable (image, document, audio, video) a short link, resolved by decodeShortLink'),
  deletable: z.boolean().describe('Internal flag kept with the variable'),
});
export type Variable = z.infer<typeof VariableSchema>;

const contactId = r.integer().required().describe("The key holder's contact (id from getContacts)");

export const getContactVariables = defineMethod({
  name: 'getContactVariables',
  verbs: ['GET', 'POST'],
  status: 200,
  title: 'Get contact variables',
  description:
    "Returns a contact's variables (the data a bot stored about the person: answers, utm_* marks, files), oldest first, as {id, name, value, deletable}. " +
    'A media variable shows a short link as its value; decodeShortLink turns it into a temporary link to the file. Changes nothing.',
  params: { contact_id: contactId },
  result: z.object({ data: z.array(VariableSchema) }),
  annotations: READ,
});

export const setContactVariable = defineMethod({
  name: 'setContactVariable',
  verbs: ['POST'],
  status: 200,
  title: 'Set a contact variable',
  description:
    "Sets a contact's variable by name, creating it if the contact lacks it, and returns it. The old value is replaced. " +
    "A variable named utm_* shows at once in the contact's utm. A media variable keeps its type: its new value must be an http(s) URL of the file. " +
    'Setting the same value twice changes nothing more.',
  params: {
    contact_id: contactId,
    name: r.string().required().max(MAX_VARIABLE_NAME).describe('Variable name, up to 255 characters, e.g. city or utm_source'),
    value: r.string().required().max(MAX_VARIABLE_VALUE).describe('The new value, text up to 65535 characters'),
    deletable: r.boolean().describe('Internal flag, 0 or 1 (default 0)'),
  },
  result: z.object({ data: VariableSchema }),
  // Not destructive in the MCP sense of losing a resource, but the old value is overwritten.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  checkWith: 'getContactVariables',
});

export const deleteContactVariable = defineMethod({
  name: 'deleteContactVariable',
  verbs: ['POST'],
  status: 204,
  title: 'Delete a contact variable',
  description:
    'Deletes one variable of a contact, chosen by id (from getContactVariables) or by name; id wins when both are given. ' +
    'Answers 204 with no body; a variable the contact does not have gives 404.',
  params: {
    contact_id: contactId,
    id: r.integer().requiredWithout('name').describe('Variable ID; required when name is not given'),
    name: r.string().max(MAX_VARIABLE_NAME).requiredWithout('id').describe('Variable name; required when id is not given'),
  },
  result: null,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  checkWith: 'getContactVariables',
});

export const variableMethods = [getContactVariables, setContactVariable, deleteContactVariable] as const;
