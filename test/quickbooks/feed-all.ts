import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/db/client.js';
import { feedJobs } from '../../src/modules/quickbooks/quickbooks.feed.js';
import type { Harness } from '../harness.js';

/**
 * Feed passes until every connected organization's place in the outbox is past its last event
 * (bounded). One pass is not enough: the feed reads only events of transactions older than every
 * transaction still running on the server, and on PostgreSQL that horizon is the whole cluster's,
 * so another test file's open transaction (in its own database) holds the feed back a moment.
 */
export async function feedAll(h: Harness): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    await feedJobs(h.database);
    const [behind] = rowsOf<{ n: number | string }>(
      await h.admin.db.execute(sql`
        SELECT count(*) AS n FROM quickbooks_connections c
        WHERE c.status = 'connected' AND EXISTS (SELECT 1 FROM events e
          WHERE e.organization_id = c.organization_id AND (e.tx, e.id) > (c.feed_tx, c.feed_event_id))`),
    );
    if (Number(behind?.n) === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the feed did not catch up');
}
