import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRAIN_LIMIT } from '../../src/platform/body-drain.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

const run = promisify(execFile);

/**
 * A body over the 1 MiB limit, sent over a real socket as a client on a network sends it (in
 * 64 KiB writes, still writing while the server decides): the service reads the rest of it (up
 * to DRAIN_LIMIT) before it answers 413 with `Connection: close`, so the client reads the 413
 * instead of a connection reset (EPIPE) under its last writes. Beyond the bound it stops reading.
 */
interface Outcome {
  status?: number;
  connection?: string;
  code?: string;
  error?: string;
  /** Bytes the client had handed to the socket when the answer (or the error) came. */
  written: number;
}

const CLIENT = fileURLToPath(new URL('./fixtures/big-body-client.ts', import.meta.url));

interface Post {
  url: string;
  size: number;
  chunked?: boolean;
  cookie?: string;
}

/** The posts, one after the other, from a client process of its own (fixtures/big-body-client.ts). */
async function post(posts: Post[]): Promise<Outcome[]> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', CLIENT, JSON.stringify(posts)]);
  return JSON.parse(stdout) as Outcome[];
}

describe('a body over the limit, over a real socket', () => {
  let h: Harness;
  let base: string;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => h?.close());

  const SIZE = 1_677_722; // 1.6 MiB: over the 1 MiB limit, under the drain bound

  it('is read to its end and answered 413 with Connection: close, every time, on every kind of route', async () => {
    const routes: Array<[string, string | undefined]> = [
      ['/api/auth/sign-up/email', undefined],
      ['/api/auth/update-user', owner.cookie],
      ['/api/customers', owner.cookie],
      ['/api/payments/stripe/webhook', undefined],
    ];
    const posts: Post[] = routes.flatMap(([path, cookie]) =>
      [false, true, false, true].map((chunked) => ({
        url: `${base}${path}`,
        size: SIZE,
        chunked,
        ...(cookie ? { cookie } : {}),
      })),
    );
    const outcomes = await post(posts);
    outcomes.forEach((got, i) => {
      expect(got, `${posts[i]?.url} chunked=${posts[i]?.chunked}`).toMatchObject({
        status: 413,
        connection: 'close',
        code: 'PAYLOAD_TOO_LARGE',
      });
    });
    // The service still answers afterwards.
    expect((await owner.call('GET', '/api/customers')).statusCode).toBe(200);
  }, 120_000);

  it('is not read beyond the drain bound: the connection is closed before the client has written it all', async () => {
    const size = DRAIN_LIMIT * 8;
    const outcomes = await post(
      [false, true].map((chunked) => ({ url: `${base}/api/auth/sign-up/email`, size, chunked })),
    );
    for (const got of outcomes) {
      // The 413 when the client happens to read it before the close, else the reset.
      if (got.status !== undefined) expect(got.status).toBe(413);
      else expect(got.error).toMatch(/EPIPE|ECONNRESET/);
      expect(got.written).toBeLessThan(size);
    }
  }, 120_000);
});
