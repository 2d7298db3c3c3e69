import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The plumbing every provider stand-in (Stripe, Twilio, QuickBooks) shares: an HTTP server on
 * 127.0.0.1 at a free port, each request handed over with its body read, and a close that
 * does not wait for kept-alive SDK connections. What each provider answers stays in its own file.
 */
export interface LocalServer {
  /** `http://127.0.0.1:<port>`, what the SDK's `*_API_BASE` points at. */
  origin: string;
  close(): Promise<void>;
}

export async function startLocalServer(
  handle: (req: IncomingMessage, body: string, res: ServerResponse) => void | Promise<void>,
): Promise<LocalServer> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    await handle(req, Buffer.concat(chunks).toString('utf8'), res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
