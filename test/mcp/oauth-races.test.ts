/**
 * The token endpoint under concurrent use of one code or one refresh token, through the built
 * CLI over SQLite and PostgreSQL (where the store's calls run on service threads, so requests
 * interleave between them): exactly one exchange or refresh gets tokens, every other is
 * invalid_grant, and the grant is revoked (a copy was used).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { usePostgres } from '../helpers/postgres.js';
import {
  codeFor,
  exchange,
  form,
  http,
  mcpInit,
  REDIRECT,
  seedWorld,
  signIn,
  startOAuth,
  type Answer,
  type OAuthRun,
} from './oauth-flow.js';

const AT_ONCE = 8;

/** The statuses and errors of `answers`, 200s first. */
function outcome(answers: Answer[]): { ok: number; invalidGrant: number; other: string[] } {
  const errors = answers.filter((a) => a.status !== 200).map((a) => `${a.status} ${(JSON.parse(a.text) as { error?: string }).error}`);
  return {
    ok: answers.filter((a) => a.status === 200).length,
    invalidGrant: errors.filter((e) => e === '400 invalid_grant').length,
    other: errors.filter((e) => e !== '400 invalid_grant'),
  };
}

function suite(dbOf: () => Promise<string>): void {
  let run: OAuthRun;
  beforeAll(async () => {
    run = await startOAuth(await dbOf());
  }, 60_000);
  afterAll(() => run?.close());

  test(`one code exchanged ${AT_ONCE} times at once: one answer holds tokens, the rest invalid_grant, and the grant is revoked`, async () => {
    const c = await codeFor(run.base, 'alice-key');
    const fields = { code: c.code, code_verifier: c.verifier, client_id: c.clientId, redirect_uri: REDIRECT };
    const answers = await Promise.all(Array.from({ length: AT_ONCE }, () => exchange(run.base, fields)));
    expect(outcome(answers)).toEqual({ ok: 1, invalidGrant: AT_ONCE - 1, other: [] });
    const won = JSON.parse(answers.find((a) => a.status === 200)!.text) as { access_token: string };
    // The replays revoked the grant: the tokens that one exchange got do not work.
    expect((await mcpInit(run.mcp, won.access_token)).status).toBe(401);
  });

  test(`one refresh token used ${AT_ONCE} times at once: one answer holds new tokens, the rest invalid_grant, and the grant is revoked`, async () => {
    const { clientId, tokens } = await signIn(run.base, 'bob-key');
    const fields = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId };
    const answers = await Promise.all(Array.from({ length: AT_ONCE }, () => http(`${run.base}/oauth/token`, form(fields))));
    expect(outcome(answers)).toEqual({ ok: 1, invalidGrant: AT_ONCE - 1, other: [] });
    const won = JSON.parse(answers.find((a) => a.status === 200)!.text) as { access_token: string };
    expect((await mcpInit(run.mcp, won.access_token)).status).toBe(401);
  });
}

describe('concurrent token requests over SQLite', () => {
  suite(() => seedWorld());
});

describe('concurrent token requests over PostgreSQL', () => {
  const pg = usePostgres();
  suite(async () => seedWorld(await pg.server().database()));
});
