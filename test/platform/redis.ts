import { Redis } from 'ioredis';

/** The machine's Redis (part of the CI machine); tests that need it are skipped without it. */
export const REDIS_URL = 'redis://127.0.0.1:6379';

export async function redisReachable(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000 });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}
