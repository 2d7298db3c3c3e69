import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { pageOf, setPageHeaders } from '../../src/platform/pagination.js';

function headersFor(url: string, query: { page?: number; limit?: number }, total: number) {
  const headers: Record<string, string> = {};
  const reply = {
    header(name: string, value: string) {
      headers[name] = value;
      return reply;
    },
  };
  setPageHeaders({ url } as FastifyRequest, reply as unknown as FastifyReply, pageOf(query), total);
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
    expect(pageOf({})).toEqual({ page: 1, limit: 50, offset: 0 });
    expect(pageOf({ page: 3, limit: 20 })).toEqual({ page: 3, limit: 20, offset: 40 });
  });

  it('links first, prev, next and last, keeping the other query parameters', () => {
    const h = headersFor('/api/customers?search=oak&page=2&limit=10', { page: 2, limit: 10 }, 35);
    expect(h['X-Total-Count']).toBe('35');
    expect(rels(h.Link)).toEqual({
      first: '/api/customers?search=oak&page=1&limit=10',
      prev: '/api/customers?search=oak&page=1&limit=10',
      next: '/api/customers?search=oak&page=3&limit=10',
      last: '/api/customers?search=oak&page=4&limit=10',
    });
  });

  it('has no prev on the first page and no next on the last', () => {
    expect(Object.keys(rels(headersFor('/api/x', {}, 50).Link))).toEqual(['first', 'last']);
    expect(Object.keys(rels(headersFor('/api/x?page=2&limit=25', { page: 2, limit: 25 }, 50).Link))).toEqual([
      'first',
      'prev',
      'last',
    ]);
  });

  it('handles an empty list and a page past the end', () => {
    const empty = headersFor('/api/x', {}, 0);
    expect(empty['X-Total-Count']).toBe('0');
    expect(rels(empty.Link)).toEqual({ first: '/api/x?page=1&limit=50', last: '/api/x?page=1&limit=50' });
    // Page 9 of 2: prev points at the real last page, never further out.
    const past = rels(headersFor('/api/x?page=9&limit=50', { page: 9, limit: 50 }, 60).Link);
    expect(past).toEqual({
      first: '/api/x?page=1&limit=50',
      prev: '/api/x?page=2&limit=50',
      last: '/api/x?page=2&limit=50',
    });
  });
});
