import type { FastifyReply, FastifyRequest } from 'fastify';

export interface Page {
  page: number;
  limit: number;
  offset: number;
}

export function pageOf(query: { page?: number | undefined; limit?: number | undefined }): Page {
  const page = query.page ?? 1;
  const limit = query.limit ?? 50;
  return { page, limit, offset: (page - 1) * limit };
}

/**
 * Pagination travels in headers so the body stays `{data: [...]}` (decisions §3):
 * `X-Total-Count` and an RFC 8288 `Link` with `next`/`prev` (and `first`/`last`).
 */
export function setPageHeaders(request: FastifyRequest, reply: FastifyReply, page: Page, total: number): void {
  reply.header('X-Total-Count', String(total));
  const url = new URL(request.url, 'http://placeholder');
  const link = (p: number, rel: string) => {
    url.searchParams.set('page', String(p));
    url.searchParams.set('limit', String(page.limit));
    return `<${url.pathname}${url.search}>; rel="${rel}"`;
  };
  const last = Math.max(1, Math.ceil(total / page.limit));
  const links = [link(1, 'first')];
  if (page.page > 1) links.push(link(Math.min(page.page - 1, last), 'prev'));
  if (page.page < last) links.push(link(page.page + 1, 'next'));
  links.push(link(last, 'last'));
  reply.header('Link', links.join(', '));
}
