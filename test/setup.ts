/** Runs in every test file: its processes stop and its temp folders go when the file ends. */
import { afterAll } from 'vitest';
import { cleanUp } from './helpers/temp.js';

afterAll(cleanUp);
