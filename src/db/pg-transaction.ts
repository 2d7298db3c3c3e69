import type pg from 'pg';

/** Clients whose ROLLBACK failed: their connection state is unknown, so the pool must not hand them out again. */
const unusable = new WeakSet<pg.PoolClient>();

/**
 * `fn` inside BEGIN … COMMIT on a client the caller checked out; ROLLBACK on any error
 * (BEGIN's included). `begin` may carry statements sent with BEGIN in the same round trip
 * (tenancy.ts sets the tenant's settings that way). Give the client back with releaseClient.
 */
export async function transactionOn<T>(client: pg.PoolClient, fn: () => Promise<T>, begin = 'BEGIN'): Promise<T> {
  try {
    await client.query(begin);
    const result = await fn();
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {
      unusable.add(client);
    });
    throw err;
  }
}

/** Returns the client to its pool, or discards it when a ROLLBACK on it failed. */
export function releaseClient(client: pg.PoolClient): void {
  client.release(unusable.has(client) || undefined);
}
