/** PostgreSQL SQLSTATE of a failed query, whichever driver raised it (Drizzle wraps the driver error in `cause`). */
export function sqlStateOf(err: unknown): string | undefined {
  let e = err as { code?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; e && depth < 5; depth++) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
    e = e.cause as typeof e;
  }
  return undefined;
}

/** 23503: a row is still referenced by another table's foreign key. */
export const isForeignKeyViolation = (err: unknown) => sqlStateOf(err) === '23503';
