/*
 * A link a person follows in a browser (the portal link in a mail, Intuit sending the owner back
 * after its consent page) and the same URL called by a program answer differently: a page or a
 * redirect for the one, JSON for the other. The Accept header decides.
 */

/** Whether a request's Accept header asks for a web page rather than JSON (a browser following a link). */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  let htmlQ = 0;
  let jsonQ = 0;
  for (const item of accept.split(',')) {
    const [type = '', ...params] = item.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q)) continue;
    if (type.trim() === 'text/html') htmlQ = Math.max(htmlQ, q);
    if (type.trim() === 'application/json') jsonQ = Math.max(jsonQ, q);
  }
  return htmlQ > 0 && htmlQ > jsonQ;
}
