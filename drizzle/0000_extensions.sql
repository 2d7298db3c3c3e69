-- Trigram search for customers (spec 4.1 search). PGlite loads the extension module in src/db/client.ts.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
