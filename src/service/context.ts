/** What a handler gets besides its params, and how it answers with a non-default status. */
import type { OwnerRow } from '../store/owners.js';
import type { StoreApi } from '../store/store-api.js';

export interface Ctx {
  readonly store: StoreApi;
  readonly owner: OwnerRow;
  /** The method's URL without query: the `path` of paging answers. */
  readonly url: string;
  /** The time of the request. */
  readonly now: Date;
  /** Secret material for encryption and signing, from the service's options. */
  readonly secrets: Secrets;
}

export interface Secrets {
  /** 32-byte key for AES-256-GCM of encryptable list fields. */
  readonly encryptionKey: Buffer;
  /** Key for signing links. */
  readonly signingKey: Buffer;
}

/** A handler's answer when it differs from the method's default status (201 vs 200). */
export class Reply<B = unknown> {
  constructor(
    readonly status: number,
    readonly body: B,
  ) {}
}
