/** Types of tools/api-docs.mjs, for the test that holds docs/api.md to the definitions. */
import type { MethodDef, Verb } from '../src/api/define.js';
import type { ERRORS } from '../src/api/errors.js';

export function renderApiDocs(input: { methods: readonly MethodDef[]; errors: typeof ERRORS; verbFor: (def: MethodDef) => Verb }): string;
export const API_DOCS: string;
