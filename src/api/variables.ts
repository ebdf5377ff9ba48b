/**
 * Contact variables (shape from the service's public docs): getContactVariables,
 * setContactVariable, deleteContactVariable. Variables named `utm_*` are the contact's `utm`.
 */
import { z } from 'zod';
import { defineMethod, DESTROY, READ } from './define.js';
import { contactId } from './params.js';
import { r } from './rules.js';

/** Longest variable name and value, in characters (ours). */
const MAX_VARIABLE_NAME = 255;
const MAX_VARIABLE_VALUE = 65_535;

const VariableSchema = z.object({
  id: z.number().int().describe('Variable ID; pass it to deleteContactVariable as id'),
  name: z.string(),
  value: z
    .string()
    .nullable()
    .describe('The value; for a media variable (image, document, audio, video) a short link, resolved by decodeShortLink'),
  deletable: z.boolean().describe('Internal flag kept with the variable'),
});
export type Variable = z.infer<typeof VariableSchema>;

export const getContactVariables = defineMethod({
  name: 'getContactVariables',
  title: 'Get contact variables',
  description:
    "A contact's variables (what a bot stored about the person: answers, utm_* marks, files), oldest first. " +
    "A media variable's value is a short link: decodeShortLink gives the file.",
  params: { contact_id: contactId },
  result: z.object({ data: z.array(VariableSchema) }),
  annotations: READ,
});

export const setContactVariable = defineMethod({
  name: 'setContactVariable',
  title: 'Set a contact variable',
  description:
    "Sets a contact's variable by name (made if missing), replacing its value. utm_* ones show in the contact's utm. " +
    'A media variable keeps its type: the value must be an http(s) URL of the file.',
  params: {
    contact_id: contactId,
    name: r.string().required().max(MAX_VARIABLE_NAME).describe('e.g. city or utm_source'),
    value: r.string().required().max(MAX_VARIABLE_VALUE),
    deletable: r.boolean().describe('Internal flag; default false'),
  },
  result: z.object({ data: VariableSchema }),
  // Not destructive in the MCP sense of losing a resource, but the old value is overwritten.
  annotations: DESTROY,
  checkWith: { method: getContactVariables },
});

export const deleteContactVariable = defineMethod({
  name: 'deleteContactVariable',
  title: 'Delete a contact variable',
  description: "Deletes a contact's variable by id or name (id wins).",
  params: {
    contact_id: contactId,
    id: r.integer().requiredWithout('name').describe('Required without name'),
    name: r.string().max(MAX_VARIABLE_NAME).requiredWithout('id').describe('Required without id'),
  },
  result: null,
  annotations: DESTROY,
  checkWith: { method: getContactVariables },
});

export const variableMethods = [getContactVariables, setContactVariable, deleteContactVariable] as const;
