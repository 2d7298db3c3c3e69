import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWorker } from '../../src/background/runner.js';
import { blockedReason, literalBlockedReason } from '../../src/delivery/ssrf.js';
import { createEndpoint } from '../../src/modules/webhooks/webhooks.service.js';
import { SecretBox } from '../../src/platform/secrets.js';
import { inTenant } from '../../src/platform/tenancy.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { emitEvents, type Receiver, startReceiver, startWorker, waitFor } from './helpers.js';

/** Every address here must be refused, however it is spelled. */
const BLOCKED_URLS = [
  'http://127.0.0.1/',
  'http://127.255.255.254/',
  'http://2130706433/', // decimal 127.0.0.1
  'http://0x7f.1/', // hex + short form
  'http://0x7f000001/',
  'http://0177.0.0.1/', // octal
  'http://127.1/',
  'http://0/', // 0.0.0.0
  'http://0.0.0.0/',
  'http://10.0.0.1/',
  'http://172.16.5.4/',
  'http://172.31.255.255/',
  'http://192.168.1.1/',
  'http://169.254.169.254/latest/meta-data/', // cloud metadata
  'http://169.254.0.1/',
  'http://100.64.0.1/', // CGNAT
  'http://100.127.255.254/',
  'http://224.0.0.1/', // multicast
  'http://239.255.255.250/',
  'http://255.255.255.255/', // broadcast
  'http://192.0.2.10/', // documentation
  'http://198.51.100.7/',
  'http://203.0.113.9/',
  'http://198.18.0.1/', // benchmarking
  'http://240.0.0.1/', // reserved
  'http://[::1]/',
  'http://[::]/',
  'http://[0:0:0:0:0:0:0:1]/',
  'http://[::ffff:127.0.0.1]/', // IPv4-mapped
  'http://[::ffff:7f00:1]/',
  'http://[::ffff:169.254.169.254]/',
  'http://[::ffff:10.1.2.3]/',
  'http://[::127.0.0.1]/', // IPv4-compatible
  'http://[64:ff9b::127.0.0.1]/', // NAT64 embedding loopback
  'http://[64:ff9b::a00:1]/', // NAT64 embedding 10.0.0.1
  'http://[64:ff9b::a9fe:a9fe]/', // NAT64 embedding metadata
  'http://[fd00:ec2::254]/', // AWS metadata over IPv6 (ULA)
  'http://[fc00::1]/',
  'http://[fe80::1]/', // link-local
  'http://[ff02::1]/', // multicast
  'http://[2001:db8::1]/', // documentation
  'http://[2002:7f00:1::]/', // 6to4 of 127.0.0.1
  'http://[2001::1]/', // Teredo
];

const ALLOWED = ['8.8.8.8', '93.184.215.14', '2606:4700:4700::1111', '64:ff9b::808:808', '::ffff:8.8.8.8'];

describe('SSRF guard: address classification', () => {
  it(`refuses ${BLOCKED_URLS.length} loopback/private/reserved spellings`, () => {
    expect(BLOCKED_URLS.length).toBeGreaterThanOrEqual(30);
    for (const u of BLOCKED_URLS) expect(literalBlockedReason(new URL(u)), u).not.toBeNull();
  });
  it('lets public unicast addresses through', () => {
    for (const a of ALLOWED) expect(blockedReason(a), a).toBeNull();
  });
});

describe('SSRF guard: at delivery time', () => {
  let h: Harness;
  let owner: TestUser;
  let worker: RunningWorker;
  let r: Receiver;

  beforeAll(async () => {
    h = await createHarness({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_RETRY_SCHEDULE: '50ms' });
    owner = await newTenant(h);
    r = await startReceiver();
    worker = startWorker(h.database, h.config, { timeoutMs: 2000 });
  });
  afterAll(async () => {
    await worker?.stop();
    await r?.close();
    await h?.close();
  });

  it('never connects to a receiver on 127.0.0.1, whatever the spelling or DNS name', async () => {
    // Written straight to the database, as if registered before the address became private (DNS rebinding).
    const box = new SecretBox(h.config.authSecret);
    const urls = [
      `http://127.0.0.1:${r.port}/hook`,
      `http://2130706433:${r.port}/hook`,
      `http://0x7f.1:${r.port}/hook`,
      `http://[::ffff:127.0.0.1]:${r.port}/hook`,
      `http://localhost:${r.port}/hook`, // a name: checked by the connect-time lookup
    ];
    const ids: string[] = [];
    for (const url of urls) {
      const ep = await inTenant(
        h.database.db,
        owner.organizationId,
        { kind: 'user', id: owner.userId, role: 'owner' },
        (ctx) => createEndpoint(ctx, box, { url: new URL(url).toString(), events: ['customer.created'] }),
      );
      ids.push(ep.id);
    }
    await emitEvents(h.database, owner.organizationId, [{ type: 'customer.created', data: { customerId: 'cus_1' } }]);
    for (const id of ids) {
      const [d] = await waitFor(async () => {
        const l = (await owner.call('GET', `/api/webhooks/${id}/deliveries`)).json().data;
        return l[0]?.status === 'dead' ? l : null;
      }, `delivery to ${id} to die`);
      const detail = (await owner.call('GET', `/api/webhook-deliveries/${d.id}`)).json().data;
      expect(detail.attemptLog).toHaveLength(2);
      for (const a of detail.attemptLog) {
        expect(a.statusCode).toBeNull();
        expect(a.error).toMatch(/[Bb]locked/);
      }
    }
    expect(r.connections).toBe(0);
    expect(r.received).toHaveLength(0);
  });
});
