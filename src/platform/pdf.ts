/*
 * Billing documents (invoices, estimates) drawn as PDF files, and a PDF sent as an HTTP answer:
 * shared by the modules that build a document's content (invoices, estimates, through
 * billing's `document-pdf.ts`), the portal that shows it and the mail task that attaches it.
 * What a document shows is read by its module; drawing needs no rows and no tenant.
 */
import type { FastifyReply } from 'fastify';
import type PDFDocument from 'pdfkit';

export interface PdfFile {
  filename: string;
  content: Buffer;
}

/** A document's PDF before it is drawn: its file name and what it shows. */
export interface PdfSource {
  filename: string;
  data: PdfDocumentData;
}

/** The success response of a PDF route, for OpenAPI: a binary body, not JSON. */
export const PdfResponse = {
  description: 'The document as a PDF',
  content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } },
};

/**
 * Draws a document read by billing's `documentPdf` (after its transaction has ended) and sends it
 * inline (browsers show it; `attachment` makes them download it).
 */
export async function sendPdf(reply: FastifyReply, source: PdfSource) {
  const file = await renderPdf(source);
  return reply
    .type('application/pdf')
    .header('Content-Disposition', `inline; filename="${file.filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
    .send(file.content);
}

/** What a billing document shows on paper; built by the invoice and estimate modules. */
export interface PdfDocumentData {
  title: 'Invoice' | 'Estimate';
  number: string;
  status: string;
  currency: string;
  /** Label/value pairs under the title: dates, due date, validity. */
  facts: Array<[string, string]>;
  company: { name: string; email: string | null; phone: string | null; address: string | null };
  customer: { name: string; company: string | null; email: string | null; address: string[] };
  /** Where the work is done (the document's property), when it names one: printed beside the customer. */
  serviceAddress?: string[] | undefined;
  lines: Array<{ description: string; quantity: number; unitPrice: number; amount: number; taxable: boolean }>;
  subtotal: number;
  taxRate: number;
  tax: number;
  total: number;
  /** Invoices only. */
  payments?: Array<{ date: string; method: string; amount: number; refunded: number }>;
  amountPaid?: number;
  balance?: number;
  notes: string | null;
}

/** Draws a document read by billing's `documentPdf` into its file. */
export async function renderPdf(source: PdfSource): Promise<PdfFile> {
  return { filename: source.filename, content: await renderDocumentPdf(source.data) };
}

const money = (n: number) => n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const qty = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 3 });
const label = (status: string) => status.replace(/_/g, ' ').toUpperCase();

/*
 * pdfkit's 14 standard fonts ship inside the package (AFM metrics, nothing fetched,
 * nothing embedded); they cover WinAnsi only, so characters outside it are replaced
 * rather than printed as garbage.
 */
const WIN_ANSI_EXTRA = '€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ';
const printable = (s: string) =>
  [...s.normalize('NFC')]
    .map((ch) => {
      const code = ch.codePointAt(0) ?? 0;
      if (ch === '\n' || (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff)) return ch;
      return WIN_ANSI_EXTRA.includes(ch) ? ch : '?';
    })
    .join('');

const MARGIN = 50;
const PAGE_WIDTH = 612; // US Letter
const RIGHT = PAGE_WIDTH - MARGIN;
const COLS = { description: MARGIN, quantity: 330, unitPrice: 390, amount: 470 };

/**
 * pdfkit, loaded with the first document: importing it cost about 0.15 s of CPU at every start,
 * before /readyz, for a feature most processes use later or never.
 */
let pdfkit: Promise<typeof PDFDocument> | undefined;

/** Renders the document as a PDF (US Letter), page breaks included. */
export async function renderDocumentPdf(d: PdfDocumentData): Promise<Buffer> {
  pdfkit ??= import('pdfkit').then((m) => m.default);
  const PDF = await pdfkit;
  const doc = new PDF({
    size: 'LETTER',
    margin: MARGIN,
    info: { Title: `${d.title} ${d.number}`, Author: printable(d.company.name) },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const text = (s: string) => printable(s);
  const bottom = () => doc.page.height - MARGIN;
  const ensure = (height: number) => {
    if (doc.y + height > bottom()) doc.addPage();
  };

  // Header: company on the left, title, number and status on the right.
  const top = doc.y;
  doc.font('Helvetica-Bold').fontSize(16).text(text(d.company.name), MARGIN, top, { width: 280 });
  doc.font('Helvetica').fontSize(9);
  for (const part of [d.company.address, d.company.phone, d.company.email]) {
    if (part) doc.text(text(part), { width: 280 });
  }
  const leftEnd = doc.y;
  doc
    .font('Helvetica-Bold')
    .fontSize(22)
    .text(d.title.toUpperCase(), 330, top, { width: RIGHT - 330, align: 'right' });
  doc
    .font('Helvetica')
    .fontSize(10)
    .text(text(d.number), { width: RIGHT - 330, align: 'right' });
  doc.font('Helvetica-Bold').text(`Status: ${label(d.status)}`, { width: RIGHT - 330, align: 'right' });
  doc.font('Helvetica');
  for (const [k, v] of d.facts) doc.text(`${k}: ${v}`, { width: RIGHT - 330, align: 'right' });
  doc.y = Math.max(leftEnd, doc.y) + 20;

  // Bill to.
  doc
    .font('Helvetica-Bold')
    .fontSize(10)
    .text(d.title === 'Invoice' ? 'BILL TO' : 'PREPARED FOR', MARGIN, doc.y);
  const billTop = doc.y;
  doc.font('Helvetica').fontSize(10).text(text(d.customer.name));
  for (const part of [d.customer.company, ...d.customer.address, d.customer.email]) {
    if (part) doc.text(text(part));
  }
  if (d.serviceAddress && d.serviceAddress.length > 0) {
    const billEnd = doc.y;
    doc
      .font('Helvetica-Bold')
      .fontSize(10)
      .text('SERVICE ADDRESS', 330, billTop - doc.currentLineHeight(true), {
        width: RIGHT - 330,
      });
    doc.font('Helvetica');
    for (const part of d.serviceAddress) doc.text(text(part), { width: RIGHT - 330 });
    doc.x = MARGIN;
    doc.y = Math.max(billEnd, doc.y);
  }
  doc.moveDown(1.5);

  // Lines.
  const header = () => {
    const y = doc.y;
    doc.font('Helvetica-Bold').fontSize(9);
    doc.text('DESCRIPTION', COLS.description, y, { width: COLS.quantity - COLS.description - 10 });
    doc.text('QTY', COLS.quantity, y, { width: 50, align: 'right' });
    doc.text('UNIT PRICE', COLS.unitPrice, y, { width: 70, align: 'right' });
    doc.text('AMOUNT', COLS.amount, y, { width: RIGHT - COLS.amount, align: 'right' });
    doc
      .moveTo(MARGIN, doc.y + 2)
      .lineTo(RIGHT, doc.y + 2)
      .stroke();
    doc.y += 6;
    doc.font('Helvetica').fontSize(10);
  };
  header();
  for (const l of d.lines) {
    const description = text(l.description) + (l.taxable || d.taxRate === 0 ? '' : ' (no tax)');
    const height = doc.heightOfString(description, { width: COLS.quantity - COLS.description - 10 });
    if (doc.y + height > bottom()) {
      doc.addPage();
      header();
    }
    const y = doc.y;
    doc.text(description, COLS.description, y, { width: COLS.quantity - COLS.description - 10 });
    const after = doc.y;
    doc.text(qty(l.quantity), COLS.quantity, y, { width: 50, align: 'right' });
    doc.text(money(l.unitPrice), COLS.unitPrice, y, { width: 70, align: 'right' });
    doc.text(money(l.amount), COLS.amount, y, { width: RIGHT - COLS.amount, align: 'right' });
    doc.y = Math.max(after, doc.y) + 4;
  }
  doc.moveTo(MARGIN, doc.y).lineTo(RIGHT, doc.y).stroke();
  doc.y += 8;

  // Totals.
  const totals: Array<[string, string, boolean]> = [
    ['Subtotal', money(d.subtotal), false],
    [`Tax (${qty(d.taxRate)}%)`, money(d.tax), false],
    [`Total (${d.currency})`, money(d.total), true],
  ];
  if (d.amountPaid !== undefined) totals.push(['Amount paid', money(d.amountPaid), false]);
  if (d.balance !== undefined) totals.push([`Balance due (${d.currency})`, money(d.balance), true]);
  ensure(totals.length * 16);
  for (const [k, v, bold] of totals) {
    const y = doc.y;
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(10);
    doc.text(k, 330, y, { width: 130, align: 'right' });
    doc.text(v, COLS.amount, y, { width: RIGHT - COLS.amount, align: 'right' });
    doc.y += 4;
  }

  // Payments received.
  if (d.payments && d.payments.length > 0) {
    doc.moveDown(1.5);
    ensure(40);
    doc.font('Helvetica-Bold').fontSize(10).text('PAYMENTS', MARGIN, doc.y);
    doc.font('Helvetica').fontSize(10);
    for (const p of d.payments) {
      ensure(16);
      const y = doc.y;
      const refunded = p.refunded > 0 ? ` (refunded ${money(p.refunded)})` : '';
      doc.text(`${p.date}  ${p.method}${refunded}`, MARGIN, y, { width: 330 });
      doc.text(money(p.amount), COLS.amount, y, { width: RIGHT - COLS.amount, align: 'right' });
    }
  }

  if (d.notes) {
    doc.moveDown(1.5);
    ensure(40);
    doc.font('Helvetica-Bold').fontSize(10).text('NOTES', MARGIN, doc.y);
    doc
      .font('Helvetica')
      .fontSize(10)
      .text(text(d.notes), { width: RIGHT - MARGIN });
  }
  doc.end();
  return done;
}
