-- Tenant-bound reads of customer_search (docs/customers.md, src/db/migrate.ts RLS_NOT_FORCED_TABLES).
-- Under row-level security PostgreSQL uses an index only for LEAKPROOF operators, and LIKE, the
-- pg_trgm operators and @> are not; so the table's RLS is enabled but not forced, and the search
-- reads run here as the table's owner, bound to the transaction's app.organization_id. The
-- patterns are inlined as quoted literals so each call is planned with its values (trigram index).
CREATE OR REPLACE FUNCTION customer_search_matching(patterns text[]) RETURNS SETOF text
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
  IF coalesce(array_length(patterns, 1), 0) = 0 OR array_length(patterns, 1) > 8 THEN
    RAISE EXCEPTION 'customer_search_matching takes 1 to 8 patterns';
  END IF;
  RETURN QUERY EXECUTE format(
    'SELECT customer_id FROM public.customer_search WHERE organization_id = %L AND (%s)',
    current_setting('app.organization_id', true),
    (SELECT string_agg(format('search_text LIKE %L', p), ' OR ') FROM unnest(patterns) AS p));
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION customer_search_tagged(tag text) RETURNS SETOF text
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
  RETURN QUERY EXECUTE format(
    'SELECT customer_id FROM public.customer_search WHERE organization_id = %L AND tags @> ARRAY[%L]::text[]',
    current_setting('app.organization_id', true), tag);
END $$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION customer_search_matching(text[]), customer_search_tagged(text) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION customer_search_matching(text[]), customer_search_tagged(text) TO crm_app, crm_platform;
