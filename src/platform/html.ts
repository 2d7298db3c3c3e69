/*
 * HTML written as a tagged template: every interpolated value is escaped unless it is
 * itself `html` output, so customer and company text cannot inject markup. Used by the
 * server-rendered pages (the portal) and by the HTML parts of mails.
 */

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

function part(v: unknown): string {
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(part).join('');
  if (v === null || v === undefined || v === false) return '';
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] as string;
  values.forEach((v, i) => {
    out += part(v) + strings[i + 1];
  });
  return new Html(out);
}

/**
 * A short transactional mail as HTML: a heading, paragraphs and one button-like link.
 * Inline styles only (mail clients drop <style> blocks and never load outside CSS).
 */
export function mailHtml(input: {
  heading: string;
  paragraphs: string[];
  action?: { label: string; url: string };
  footer?: string;
}): string {
  const p = (text: string) => html`<p style="margin:0 0 16px;font-size:16px;line-height:1.5;color:#1f2933">${text}</p>`;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${input.heading}</title></head>
<body style="margin:0;padding:24px;background:#f4f5f7;font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif">
<div style="max-width:560px;margin:0 auto;background:#ffffff;border-radius:8px;padding:32px">
<h1 style="margin:0 0 16px;font-size:22px;color:#1f2933">${input.heading}</h1>
${input.paragraphs.map(p)}
${
  input.action
    ? html`<p style="margin:24px 0"><a href="${input.action.url}" style="display:inline-block;background:#1d4ed8;color:#ffffff;text-decoration:none;padding:12px 20px;border-radius:6px;font-weight:600">${input.action.label}</a></p>
<p style="margin:0 0 16px;font-size:13px;color:#52606d">Or open this link: <a href="${input.action.url}" style="color:#1d4ed8">${input.action.url}</a></p>`
    : ''
}
${input.footer ? html`<p style="margin:24px 0 0;font-size:13px;color:#7b8794">${input.footer}</p>` : ''}
</div></body></html>`.value;
}
