/**
 * A composite tool's arguments, checked as an API method's are: names the tool does not take,
 * then values, each failure a 422 in Laravel's shape.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { fail } from '../api/errors.js';
import { validate, type Infer, type Shape } from '../api/rules.js';
import { refusal } from './results.js';
import { unknownArguments } from './tools.js';

/** The typed arguments, or the 422 result to answer with. */
export function checkArguments<S extends Shape>(shape: S, args: Record<string, unknown>): { params: Infer<S> } | { error: CallToolResult } {
  const unknown = unknownArguments(shape, args);
  if (unknown.size > 0) return { error: refusal(fail.validation(unknown)) };
  const checked = validate(shape, args);
  if (!checked.ok) return { error: refusal(fail.validation(checked.errors)) };
  return { params: checked.params };
}
