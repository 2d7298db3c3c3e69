import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/platform/errors.js';
import { type PageQueryInput, pageOf, setPageHeaders } from '../../src/platform/pagination.js';

function headersFor(url: string, query: PageQueryInput, result: { hasMore: boolean; total?: number; lastId?: string }) {
  const headers: Record<string, string> = {};
  const reply = {
    header(name: string, value: string) {
      headers[name] = value;
      return reply;
    },
  };
  setPageHeaders({ url } as FastifyRequest, reply as unknown as FastifyReply, pageOf(query), result);
  return headers;
}

const rels = (link: string | undefined) =>
  Object.fromEntries(
    (link ?? '').split(', ').map((part) => {
      const m = /^<([^>]+)>; rel="(\w+)"$/.exec(part);
      return [m?.[2], m?.[1]];
    }),
  );

describe('pagination helper', () => {
  it('defaults to page 1 of 50 and computes the offset', () => {
    expect(pageOf({})).toEqual({ page: 1, limit: 50, offset: 0, startingAfter: undefined, includeTotal: false });
    expect(pageOf({ page: 3, limit: 20, includeTotal: 'true' })).toMatchObject({
      page: 3,
      limit: 20,
      offset: 40,
      includeTotal: true,
    });
    expect(pageOf({ startingAfter: 'cus_1', limit: 5 })).toMatchObject({ offset: 0, startingAfter: 'cus_1' });
  });

  it('refuses page together with startingAfter, naming the field', () => {
    let caught: unknown;
    try {
      pageOf({ page: 2, startingAfter: 'cus_1' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).details).toEqual([{ field: 'startingAfter', message: 'cannot be combined with page' }]);
  });

  it('page style: next by page number only when more exist, prev past page 1, last only with a total', () => {
    const h = headersFor('/api/customers?search=oak&page=2&limit=10', { page: 2, limit: 10 }, { hasMore: true });
    expect(h['X-Total-Count']).toBeUndefined();
    expect(rels(h.Link)).toEqual({
      first: '/api/customers?search=oak&page=1&limit=10',
      prev: '/api/customers?search=oak&page=1&limit=10',
      next: '/api/customers?search=oak&page=3&limit=10',
    });
    const counted = headersFor(
      '/api/x?page=2&limit=25&includeTotal=true',
      { page: 2, limit: 25, includeTotal: 'true' },
      {
        hasMore: false,
        total: 50,
      },
    );
    expect(counted['X-Total-Count']).toBe('50');
    expect(rels(counted.Link)).toEqual({
      first: '/api/x?includeTotal=true&page=1&limit=25',
      prev: '/api/x?includeTotal=true&page=1&limit=25',
      last: '/api/x?includeTotal=true&page=2&limit=25',
    });
  });

  it('cursor style: next carries the last id, no prev', () => {
    const h = headersFor(
      '/api/x?startingAfter=cus_a&limit=2&status=active',
      { startingAfter: 'cus_a', limit: 2 },
      {
        hasMore: true,
        lastId: 'cus_z',
      },
    );
    expect(rels(h.Link)).toEqual({
      first: '/api/x?status=active&page=1&limit=2',
      next: '/api/x?status=active&startingAfter=cus_z&limit=2',
    });
    const end = headersFor(
      '/api/x?startingAfter=cus_a',
      { startingAfter: 'cus_a' },
      { hasMore: false, lastId: 'cus_b' },
    );
    expect(Object.keys(rels(end.Link))).toEqual(['first']);
  });
});
