/**
 * Asking the user from inside a tool call, the same way for both protocol eras: the tool
 * returns the `input_required` result `ask()` makes, with a sealed, expiring request state,
 * and is called again with the answer. A 2026-07-28 client answers and retries itself; on a
 * 2025 connection (stdio, or an HTTP session) the SDK sends `elicitation/create` over the
 * session and calls the tool again in-process. The tool cannot tell which happened.
 *
 * An answer counts only when it comes back with a state this server sealed (HMAC, expiring)
 * for the same tool, the same arguments and the same owner: a client cannot make up a "yes",
 * nor carry a "yes" given for one amount over to another. The key is random per process, or
 * (instances behind a balancer, on PostgreSQL) derived from the secret they share, so that a
 * question asked by one is answered through any. A tool asks only a client that declared
 * form elicitation (`canAsk`); the SDK refuses to ask any other.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  createRequestStateCodec,
  inputRequired,
  type ClientCapabilities,
  inputResponse,
  type ElicitRequestFormParams,
  type InputRequiredResult,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';

/** How long a question stays answerable, in seconds (the SDK's own round timeout is as long). */
export const QUESTION_TTL_SECONDS = 600;

/** One question: a form of flat fields (MCP's restricted JSON Schema). */
interface Question {
  /** Names the question among the tool's questions. */
  id: string;
  message: string;
  requestedSchema: ElicitRequestFormParams['requestedSchema'];
}

/** The user's answer to a question. */
type ElicitReply = { action: 'accept'; content: Record<string, unknown> } | { action: 'decline' } | { action: 'cancel' };

/** What a tool call can ask with (one a call). */
export interface Elicitor {
  /**
   * Whether the client declared form elicitation (at initialize in 2025, on this request in
   * 2026-07-28): asking a client that did not is refused by the SDK, so a tool checks first.
   */
  readonly canAsk: boolean;
  /**
   * The answer to question `id`, when this call is the retry that carries it under a state
   * sealed for this tool and these arguments; otherwise undefined (ask).
   */
  reply(id: string): ElicitReply | undefined;
  /** The data `ask` sealed with the question, under the same conditions as `reply`. */
  state<T = unknown>(): T | undefined;
  /** The result to return to ask `question`; `data` is sealed with it (readable by the client, so nothing secret). */
  ask(question: Question, data?: unknown): Promise<InputRequiredResult>;
}

/** What the sealed state carries: the tool, a digest of its arguments, who asked, the tool's data. */
interface Sealed {
  tool: string;
  args: string;
  /** The owner the server acted for when it asked: an answer counts only for the same one. */
  who?: string;
  data?: unknown;
}

/** Whether the client's `capabilities` declare form elicitation (a bare `elicitation: {}` is the 2025 way of saying so). */
function canElicitForm(capabilities: ClientCapabilities | undefined): boolean {
  const e = capabilities?.elicitation as { form?: unknown; url?: unknown } | undefined;
  return e !== undefined && (e.form !== undefined || e.url === undefined);
}

/** The codec of one server's states: key and binding. */
export class QuestionSeal {
  readonly codec: RequestStateCodec<Sealed>;

  /**
   * `key`: at least 32 bytes; random at start by default (a restart forgets open questions),
   * or the one every instance of a server derives from its shared secret.
   */
  constructor(key: Uint8Array = randomBytes(32)) {
    this.codec = createRequestStateCodec<Sealed>({
      key,
      ttlSeconds: QUESTION_TTL_SECONDS,
      // A state answers the method it was minted for, for the same principal (over HTTP the token's).
      bind: (ctx) => `${ctx.mcpReq.method}\0${ctx.http?.authInfo?.clientId ?? ''}`,
    });
  }

  /** The verify hook for ServerOptions.requestState (refuses a forged, changed or expired state). */
  readonly verify = (state: string, ctx: ServerContext): Promise<Sealed> => this.codec.verify(state, ctx);

  /**
   * The elicitor of one tool call: `capabilities`, the client's declared ones; `who`, the owner
   * the server acts for (a state sealed for another owner does not count).
   */
  elicitor(
    ctx: ServerContext,
    tool: string,
    args: Record<string, unknown>,
    o: { capabilities?: ClientCapabilities; who?: string } = {},
  ): Elicitor {
    // Worked out when first asked for: most calls never ask.
    let digest: string | undefined;
    const argsOf = () => (digest ??= argsDigest(args));
    const sealed = ctx.mcpReq.requestState<Sealed>();
    const mine = sealed !== undefined && sealed.tool === tool && sealed.args === argsOf() && sealed.who === o.who ? sealed : undefined;
    return {
      canAsk: canElicitForm(o.capabilities),
      reply(id) {
        if (!mine) return undefined;
        const view = inputResponse(ctx.mcpReq.inputResponses, id);
        if (view.kind !== 'elicit') return undefined;
        if (view.action === 'accept') return { action: 'accept', content: view.content ?? {} };
        return { action: view.action };
      },
      state: <T>() => mine?.data as T | undefined,
      ask: async (question, data) =>
        inputRequired({
          inputRequests: { [question.id]: inputRequired.elicit({ message: question.message, requestedSchema: question.requestedSchema }) },
          requestState: await this.codec.mint(
            { tool, args: argsOf(), ...(o.who !== undefined ? { who: o.who } : {}), ...(data !== undefined ? { data } : {}) },
            ctx,
          ),
        }),
    };
  }
}

/** A digest of the arguments that does not depend on their key order. */
function argsDigest(args: Record<string, unknown>): string {
  const canonical = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canonical);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  };
  return createHash('sha256')
    .update(JSON.stringify(canonical(args)))
    .digest('base64url');
}
