import { stateMachine } from '../../platform/state-machine.js';
import type { ExportStatus } from './exports.schemas.js';

/**
 * An export's life (operations.md §7): the worker claims a queued export, then completes
 * or fails it; the sweep queues a running export whose worker stopped again (`requeue`)
 * or gives up on it (`fail`) after too many attempts. Every status the worker writes is
 * taken from this table.
 */
export const exportMachine = stateMachine<ExportStatus, 'claim' | 'complete' | 'fail' | 'requeue'>('export', {
  queued: { claim: 'running' },
  running: { complete: 'completed', fail: 'failed', requeue: 'queued' },
  completed: {},
  failed: {},
});
