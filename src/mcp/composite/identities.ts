/**
 * The composite tools' names, titles and annotations: known without loading the tools, so the
 * tool flags (serve/tool-filter.ts) are checked at start-up before anything else loads.
 */
/** A composite tool changes nothing. */
const OWN_TOOL = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** exportContacts's name, title and annotations. */
export const EXPORT_TOOL_INFO = { name: 'exportContacts', title: 'Export contacts to a file', annotations: OWN_TOOL } as const;

/** findContacts's name, title and annotations. */
export const FIND_TOOL_INFO = { name: 'findContacts', title: 'Find contacts', annotations: OWN_TOOL } as const;

/** getWorkspace's name, title and annotations. */
export const WORKSPACE_TOOL_INFO = { name: 'getWorkspace', title: 'Your workspace: owner, projects, bots', annotations: OWN_TOOL } as const;

/** previewBulk's name, title and annotations: it keeps a plan in the server's state and changes no data. */
export const PREVIEW_BULK_TOOL_INFO = { name: 'previewBulk', title: 'Plan an action on a segment', annotations: OWN_TOOL } as const;

/** runBulk's name, title and annotations: it carries out a plan (money, messages); called again it goes on, never repeating a step. */
export const RUN_BULK_TOOL_INFO = {
  name: 'runBulk',
  title: 'Carry out a bulk plan',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
} as const;
