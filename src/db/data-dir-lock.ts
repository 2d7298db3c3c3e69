import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * One process at a time on an embedded database directory (issue 29 item 4).
 *
 * PGlite is PostgreSQL in one process with no postmaster: a second process opening the same
 * DATA_DIR (an `npm run admin` beside `npm start`, a second `npm start`) would write the same
 * files with no coordination and can corrupt them. The holder listens on a Unix socket in the
 * data directory. The socket lives exactly as long as the process (a crash or `kill -9` leaves
 * a file nobody answers on, which the next process takes over), unlike a pid file, whose pid
 * a restarted container may reuse. A second process finds the socket answering, reads the
 * holder's pid and command from it, and refuses with what to do.
 */
export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
}

export interface DataDirLock {
  release(): void;
}

interface Holder {
  pid: number;
  command: string;
}

/** Unix sockets paths are limited to about 104 bytes: a long DATA_DIR gets one under the temp dir, named by its path. */
function socketPath(dir: string): string {
  const absolute = resolve(dir);
  const hash = createHash('sha256').update(absolute).digest('hex').slice(0, 24);
  if (process.platform === 'win32') return `\\\\.\\pipe\\crm-data-${hash}`;
  const beside = join(absolute, '.lock.sock');
  return Buffer.byteLength(beside) < 100 ? beside : join(tmpdir(), `crm-data-${hash}.sock`);
}

function listen(path: string, holder: Holder): Promise<Server> {
  return new Promise((resolveListen, reject) => {
    const server = createServer((socket) => {
      socket.on('error', () => {});
      socket.end(JSON.stringify(holder));
    });
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      // The lock never keeps a process alive on its own.
      server.unref();
      resolveListen(server);
    });
  });
}

/** The holder's answer, or undefined when nobody answers (a socket file left by a process that died). */
function ask(path: string): Promise<Holder | undefined> {
  return new Promise((resolveAsk) => {
    const socket = connect(path);
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      // Someone accepted the connection but said nothing in 2 s: still a live holder.
      resolveAsk({ pid: 0, command: 'unknown' });
    }, 2000);
    socket.on('data', (d) => {
      text += String(d);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      try {
        resolveAsk(JSON.parse(text) as Holder);
      } catch {
        resolveAsk({ pid: 0, command: 'unknown' });
      }
    });
    socket.on('error', () => {
      clearTimeout(timer);
      resolveAsk(undefined);
    });
  });
}

export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const path = socketPath(dir);
  const holder = { pid: process.pid, command: process.argv.slice(1).join(' ') };
  for (let attempt = 0; ; attempt++) {
    try {
      const server = await listen(path, holder);
      return {
        release: () => {
          // Closing a listening Unix socket removes its file.
          server.close();
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt > 0) throw err;
    }
    const other = await ask(path);
    if (other) {
      const who = other.pid ? `process ${other.pid} (${other.command})` : 'another process';
      throw new DataDirLockedError(
        `The embedded database in ${resolve(dir)} is in use by ${who}. It allows one process at a time: ` +
          `stop that process first (Ctrl-C in its terminal${other.pid ? `, or kill -TERM ${other.pid}` : ''}) and run this again, ` +
          'or point both at PostgreSQL (DATABASE_URL), which any number of processes may share.',
      );
    }
    // Left behind by a process that died without closing it: take it over.
    rmSync(path, { force: true });
  }
}
