import { type TSchema, Type } from 'typebox';

/*
 * Shared schema pieces. Field documentation lives in `description`s so that the
 * OpenAPI document explains every field.
 */

/** `{ data: T }`: the envelope of every successful response (spec Part 1). */
export const Envelope = <T extends TSchema>(data: T) => Type.Object({ data }, { additionalProperties: false });

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      message: Type.String(),
      code: Type.String({ description: 'Stable machine-readable code, e.g. NOT_FOUND, VALIDATION_FAILED' }),
      requestId: Type.String({ description: 'Same as the X-Request-Id response header' }),
      details: Type.Optional(
        Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
          description: 'One entry per invalid field (VALIDATION_FAILED)',
        }),
      ),
    }),
  },
  { $id: 'ErrorBody', title: 'Error' },
);

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const DateOnly = (description?: string) =>
  Type.String({ format: 'date', description: description ?? 'Date, YYYY-MM-DD', examples: ['2026-05-01'] });

/** A date-time. Typed `Date | string` so services may hand back Date objects; they serialise to ISO 8601 UTC. */
export const DateTime = (description?: string) =>
  Type.Unsafe<Date | string>({
    type: 'string',
    format: 'date-time',
    description: description ?? 'ISO 8601 date-time, UTC',
  });

/** `204 No Content`. */
export const NoContent = Type.Null({ description: 'No content' });

/**
 * Money in a request: a JSON number with at most two decimals. Stored as integer cents.
 * `multipleOf` is not used because 0.1 + 0.2 style floats fail it spuriously;
 * `toCents` in platform/money.ts checks the decimals exactly.
 */
export const Money = (description?: string, minimum = 0) =>
  Type.Number({ minimum, maximum: 1_000_000_000, description: description ?? 'Amount with at most two decimals' });

/** Far beyond any real list, small enough that OFFSET (page − 1) × limit stays an exact integer. */
export const MAX_PAGE = 10_000_000;

/**
 * The query parameters every list accepts (operations.md §1). `page` has no default
 * here, so a request that sends `startingAfter` alone is told apart from one that
 * also sends `page` (→ 400); the page is 1 when neither is sent.
 */
export const PageQuery = {
  page: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_PAGE,
      description: 'Page number, from 1 (OFFSET paging; prefer startingAfter deep in a list)',
    }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Page size, 1..100' })),
  startingAfter: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9_-]+$',
      description:
        'Cursor: the id of the last record of the previous page (Link rel="next" carries it). Not with page. An id that names no record of this list → 400',
    }),
  ),
  includeTotal: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description: 'true: send X-Total-Count, the count of every record matching the filters (costs a count)',
    }),
  ),
};

/** The query of a read that takes no parameters: any parameter is refused (400). */
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/**
 * The first OpenAPI example of an object schema, for a wider schema's example to start
 * from (a detail answer = the list item + its nested parts), so the two cannot drift.
 */
export function exampleOf(schema: TSchema): Record<string, unknown> {
  const [first] = ((schema as { examples?: unknown[] }).examples ?? []) as Array<Record<string, unknown>>;
  if (!first) throw new Error('exampleOf: the schema has no example');
  return first;
}

/**
 * An empty body for action routes: none at all, or `{}`. Fastify validates a
 * missing body as `null`, so `null` must be accepted explicitly.
 */
export const EmptyBody = Nullable(Type.Object({}, { additionalProperties: false }));
