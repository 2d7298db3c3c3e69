import { appendFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type nodemailer from 'nodemailer';
import type { Config } from '../config.js';

export interface MailAttachment {
  filename: string;
  content: Buffer;
  contentType: string;
}

export interface MailMessage {
  to: string[];
  subject: string;
  text: string;
  html?: string;
  attachments?: MailAttachment[];
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/**
 * Outgoing mail: over SMTP when SMTP_URL is set (nodemailer), otherwise each
 * message is appended as one JSON line to MAIL_OUTBOX_FILE so local development
 * can read the links it would have sent.
 */
export function createMailer(config: Config): Mailer {
  const from = config.mailFrom;
  if (config.smtpUrl) {
    // Bounded waits: the mail worker (src/modules/mail) holds a job's lease while it sends,
    // so a hung relay must fail the attempt in seconds and let the retry schedule take over.
    // Query parameters in SMTP_URL (e.g. ?socketTimeout=60000) still override these.
    // Required here, not imported: loading nodemailer cost about 70 ms of CPU at every start of a
    // server that writes its mail to the outbox file (the default) and never uses it.
    const { createTransport } = createRequire(import.meta.url)('nodemailer') as typeof nodemailer;
    const transport = createTransport({
      url: config.smtpUrl,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
    return {
      send: async (m) => {
        await transport.sendMail({
          from,
          to: m.to,
          subject: m.subject,
          text: m.text,
          html: m.html,
          attachments: m.attachments,
        });
      },
      close: () => transport.close(),
    };
  }
  const file = config.mailOutboxFile;
  return {
    send: async (m) => {
      mkdirSync(dirname(file), { recursive: true });
      // Attachments as base64, so a developer can still open the PDF a message carried.
      const attachments = m.attachments?.map((a) => ({
        filename: a.filename,
        contentType: a.contentType,
        contentBase64: a.content.toString('base64'),
      }));
      appendFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), from, ...m, attachments })}\n`);
    },
    close: () => {},
  };
}
