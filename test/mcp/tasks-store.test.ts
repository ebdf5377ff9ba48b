/**
 * The MCP tasks' store (src/mcp/serve/tasks.ts), with work of its own: a task whose work throws
 * ends failed and does not end the process (a rejection nobody handles would, with no client
 * waiting on tasks/result); a task still working past its time to live can still be seen and
 * cancelled (forgetting it would leave its work going on out of reach), an ended one is forgotten.
 */
import { afterEach, expect, test, vi } from 'vitest';
import { Tasks } from '../../src/mcp/serve/tasks.js';

afterEach(() => {
  vi.useRealTimers();
});

const RELATED = 'io.modelcontextprotocol/related-task';

test('work that throws: the task ends failed, nothing is left unhandled, tasks/result gives the error', async () => {
  const unhandled: unknown[] = [];
  const hear = (e: unknown) => unhandled.push(e);
  process.on('unhandledRejection', hear);
  try {
    const tasks = new Tasks();
    const { taskId } = tasks.start(undefined, () => Promise.reject(new Error('the state store went away')));
    // Past the turn in which Node reports a rejection no one handled.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(unhandled).toEqual([]);
    expect(tasks.get(taskId)).toMatchObject({ status: 'failed' });
    const result = await tasks.result(taskId);
    expect(result).toMatchObject({ isError: true, _meta: { [RELATED]: { taskId } } });
  } finally {
    process.off('unhandledRejection', hear);
  }
});

test('past its time to live a working task is kept (seen, cancelled); an ended one is forgotten', async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  const tasks = new Tasks();
  let stopped = false;
  const working = tasks.start(
    60_000,
    (signal) =>
      new Promise((resolve) => {
        signal.addEventListener('abort', () => {
          stopped = true;
          resolve({ content: [] });
        });
      }),
  );
  const ended = tasks.start(60_000, { result: { content: [] } });
  vi.setSystemTime(Date.now() + 2 * 60_000);
  expect(tasks.get(working.taskId)).toMatchObject({ status: 'working' });
  expect(() => tasks.get(ended.taskId)).toThrow(/Task not found/);
  expect(tasks.list(undefined).tasks.map((t) => t.taskId)).toEqual([working.taskId]);
  expect(tasks.cancel(working.taskId)).toMatchObject({ status: 'cancelled' });
  expect(stopped).toBe(true);
  // Ended past its time: kept a minute more for its result, then forgotten.
  expect(await tasks.result(working.taskId)).toMatchObject({ _meta: { [RELATED]: { taskId: working.taskId } } });
  vi.setSystemTime(Date.now() + 61_000);
  expect(() => tasks.get(working.taskId)).toThrow(/Task not found/);
});
