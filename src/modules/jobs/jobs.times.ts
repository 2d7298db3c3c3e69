import { type SQL, sql } from 'drizzle-orm';

/**
 * A visit's start as an instant: its calendar date at its local `HH:mm` in the
 * organization's timezone, computed by PostgreSQL (`timestamp AT TIME ZONE zone`),
 * which applies that date's own UTC offset, so 08:00 stays 08:00 local across
 * daylight-saving changes. NULL when there is no start time (NULL or a NULL column).
 */
export function startsAtSql(date: SQL | string, startTime: SQL | string | null, timezone: string): SQL {
  if (startTime === null) return sql`NULL::timestamptz`;
  const d = typeof date === 'string' ? sql`${date}::date` : date;
  const t = typeof startTime === 'string' ? sql`${startTime}::time` : sql`(${startTime})::time`;
  // No CASE for a NULL time: date + time and AT TIME ZONE are strict, so NULL gives NULL. And
  // Citus refuses an UPDATE with a CASE over a STABLE function of a parameter or column (the
  // text → time cast): "non-IMMUTABLE functions are not allowed in CASE or COALESCE statements".
  return sql`((${d} + ${t}) AT TIME ZONE ${timezone})`;
}
