import { sql } from 'drizzle-orm';
import type { Database, Db, Tx } from '../../db/client.js';
import { rowsOf } from '../../db/client.js';
import { listenOn } from '../../db/listen.js';

/**
 * Revocation across API processes.
 *
 * Each API process caches resolved credentials for a few seconds (principal.ts). A
 * revocation (API key or device token revoked, member removed or role changed, plan
 * changed, sign-out, organization switch) must reach EVERY process before the request
 * that made it answers. The guarantee comes from one counter, `auth_generation`:
 *
 *  1. Every change that revokes bumps the counter and `pg_notify`s it IN ITS OWN
 *     TRANSACTION: each function that takes access away (an API key or device token
 *     revoked, a member added, removed or re-roled, a plan changed by `npm run admin`, a
 *     session switched to another organization) calls `bumpAuthGeneration` beside its
 *     write (SQL function `auth_generation_bump()`, drizzle/0042). So the new generation
 *     commits exactly when the revocation does, and no process can commit a revocation and
 *     die before announcing it; the NOTIFY is delivered at that commit. A session Better
 *     Auth deletes (sign-out) is announced by its delete hook right after its commit and
 *     before the request answers (better-auth.ts). Until drizzle/0042 triggers did this;
 *     on Citus a trigger runs on the node holding the shard, where it may not write
 *     another table and where its NOTIFY is not heard (docs/scaling.md).
 *  2. Every process stamps each cache entry with the generation it read BEFORE loading
 *     it, and serves an entry only if a generation read that STARTED AFTER the request
 *     arrived still shows that stamp. A request that arrives after the revoking answer
 *     therefore reads the new generation, misses the cache, and loads the credential
 *     from the database, where it is already revoked.
 *
 * The generation read is one indexed single-row SELECT, shared: requests that arrive
 * while a read is in flight all wait for the next one (GenerationReader), so under load
 * a process makes about one read per database round trip, not one per request; the
 * cache still saves Better Auth's session work and the two credential queries.
 *
 * LISTEN/NOTIFY is the fast path beside it: each process listens on AUTH_CHANNEL and
 * drops its whole cache when a revocation is announced, so stale entries do not even
 * stay in memory. It is not what the guarantee rests on (a notification can arrive
 * after the next request), the generation read is.
 *
 * On the embedded database there is one process: the revoking process clears its
 * cache and nothing else is needed (no counter, no reads).
 */
/**
 * Moves the revocation generation on by one and announces it, in the caller's transaction
 * (`tx`, tenant or platform: the SQL function is SECURITY DEFINER, the roles may only call it).
 */
export async function bumpAuthGeneration(tx: Tx): Promise<void> {
  await tx.execute(sql`SELECT auth_generation_bump()`);
}

/**
 * `bumpAuthGeneration` in a platform transaction (role crm_platform, which may write
 * auth_generation): the same update and announcement, as the transaction's own role. On Citus
 * the SECURITY DEFINER function would write the reference tables' placements as their owner
 * after this transaction wrote them as crm_platform (a session), which Citus refuses.
 */
export async function bumpAuthGenerationAsPlatform(tx: Tx): Promise<void> {
  const [row] = rowsOf<{ g: string }>(
    await tx.execute(
      sql`UPDATE auth_generation SET generation = generation + 1 WHERE id = 1 RETURNING generation::text AS g`,
    ),
  );
  await tx.execute(sql`SELECT pg_notify(${AUTH_CHANNEL}, ${row?.g ?? ''})`);
}

/** The channel `auth_generation_bump()` notifies on (named in that SQL function too). */
export const AUTH_CHANNEL = 'crm_auth';

/** Reads the generation; concurrent callers share reads, each answer starts after its call. */
export class GenerationReader {
  #current: Promise<string> | undefined;
  #next: Promise<string> | undefined;

  constructor(private readonly db: Db) {}

  read(): Promise<string> {
    if (!this.#current) {
      this.#current = this.#launch();
      return this.#current;
    }
    // A read is in flight, but it may have started before a revocation this caller must
    // see: wait for the next one, which starts after it (and is shared by every caller
    // arriving meanwhile).
    this.#next ??= this.#current.then(
      () => this.#promote(),
      () => this.#promote(),
    );
    return this.#next;
  }

  #promote(): Promise<string> {
    this.#next = undefined;
    this.#current = this.#launch();
    return this.#current;
  }

  #launch(): Promise<string> {
    const p: Promise<string> = this.db
      .execute(sql`SELECT generation::text AS g FROM auth_generation WHERE id = 1`)
      .then((res) => rowsOf<{ g: string }>(res)[0]?.g ?? '0')
      .finally(() => {
        if (this.#current === p) this.#current = undefined;
      });
    return p;
  }
}

/**
 * LISTENs on AUTH_CHANNEL on a dedicated connection (reconnecting when dropped) and
 * calls `onRevoked` for each announcement and after every (re)connect. PostgreSQL only.
 */
export async function listenForRevocations(
  database: Database,
  listenUrl: string | undefined,
  onRevoked: () => void,
): Promise<() => Promise<void>> {
  // The embedded database is one process: revoking clears its own cache.
  if (!database.pool) return async () => {};
  return listenOn(database, listenUrl, AUTH_CHANNEL, onRevoked);
}
