/**
 * Runs in every test file: its processes stop, its temp folders go and its PostgreSQL
 * databases are dropped when the file ends.
 */
import { afterAll } from 'vitest';
import { closeStores } from './helpers/store.js';
import { cleanUp } from './helpers/temp.js';

afterAll(async () => {
  closeStores();
  await cleanUp();
});
