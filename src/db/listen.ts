import pg from 'pg';
import type { Database } from './client.js';

/**
 * LISTENs on `channel` on a dedicated PostgreSQL connection that reconnects when dropped, and
 * calls `onNotify` for each notification and after every (re)connect (whatever was announced
 * while nobody listened). `listenUrl` (LISTEN_DATABASE_URL) is used when set: behind a
 * transaction-pooling PgBouncer a LISTEN never hears a NOTIFY, so it needs a direct connection;
 * the pool's other settings (its connect time-out) apply to it too. On PGlite the in-process
 * listener. Returns the function that stops listening.
 */
export async function listenOn(
  database: Database,
  listenUrl: string | undefined,
  channel: string,
  onNotify: () => void,
  onConnectFailed: (err: unknown) => void = () => {},
): Promise<() => Promise<void>> {
  if (database.pgliteClient) {
    // Through the client Drizzle runs on: a NOTIFY committed through it arrives in its answers.
    const unlisten = await database.pgliteClient.listen(channel, onNotify);
    return async () => {
      await unlisten().catch(() => {});
    };
  }
  if (!database.pool) throw new Error('A PostgreSQL database has a pool');
  const poolOptions: pg.ClientConfig = database.pool.options;
  const options: pg.ClientConfig =
    listenUrl && listenUrl !== poolOptions.connectionString
      ? { ...poolOptions, connectionString: listenUrl }
      : poolOptions;
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = async () => {
    if (stopped) return;
    const c = new pg.Client({ ...options });
    client = c;
    const reconnect = () => {
      if (stopped || client !== c) return;
      client = undefined;
      c.end().catch(() => {});
      retry = setTimeout(() => void connect(), 1000);
      retry.unref();
    };
    c.on('error', reconnect);
    c.on('end', reconnect);
    c.on('notification', onNotify);
    try {
      await c.connect();
      await c.query(`LISTEN ${channel}`);
      onNotify();
    } catch (err) {
      onConnectFailed(err);
      reconnect();
    }
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const c = client;
    client = undefined;
    // end() can wait forever on a connection that is still being established.
    if (c) await Promise.race([c.end().catch(() => {}), new Promise((r) => setTimeout(r, 1000).unref())]);
  };
}
