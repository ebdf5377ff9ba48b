/** Parameter rules several resources share: the ids they are called with, and the page of a paged read. */
import { r } from './rules.js';

/** A contact's id. */
export const contactId = r.integer().required();

/** A list's id (its schema's), or a record's. */
export const stringId = r.string().required().max(255);

/** A page, counted from 1: read leniently (anything not a page number is the first), advertised as an integer. */
export const page = r.any().advertise('integer');
