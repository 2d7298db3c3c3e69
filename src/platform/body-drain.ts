import type { IncomingMessage } from 'node:http';

/**
 * How much of an over-limit request body (the limit is 1 MiB) is read and thrown away before
 * the 413 is sent, so that the client, still writing, reads the answer: a server that answers
 * and closes while the body is arriving resets the connection, and the client sees EPIPE or
 * ECONNRESET instead of the 413. A body declared or found larger than this is not read on:
 * the 413 is sent and the connection closed (the client may then see the reset), so a client
 * cannot make the service read an unbounded stream.
 */
export const DRAIN_LIMIT = 4 * 1024 * 1024;

/**
 * Reads the rest of `raw` and discards it, up to `bound` bytes from now. True when the body
 * ended within the bound (the client can read whatever is sent next), false otherwise.
 */
export function drainBody(raw: IncomingMessage, bound = DRAIN_LIMIT): Promise<boolean> {
  if (raw.readableEnded || raw.complete) return Promise.resolve(true);
  if (Number(raw.headers['content-length']) > bound) return Promise.resolve(false);
  return new Promise((resolve) => {
    let seen = 0;
    const finish = (ended: boolean) => {
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('error', onFail);
      raw.off('close', onFail);
      if (!ended) raw.pause();
      resolve(ended);
    };
    const onData = (chunk: Buffer | string) => {
      seen += chunk.length;
      if (seen > bound) finish(false);
    };
    const onEnd = () => finish(true);
    const onFail = () => finish(false);
    raw.on('data', onData);
    raw.once('end', onEnd);
    raw.once('error', onFail);
    raw.once('close', onFail);
    raw.resume();
  });
}
