import { eq } from 'drizzle-orm';
import { loadConfig, PLANS, type Plan } from './config.js';
import { openDatabase } from './db/client.js';
import { migrateOnStart } from './db/migrate.js';
import { organizations } from './db/schema/index.js';
import { backfillPhones } from './modules/customers/customers.phones.js';
import { bumpAuthGenerationAsPlatform } from './platform/auth/revocations.js';
import { asPlatform } from './platform/cross-tenant.js';

/**
 * Operator commands: `npm run admin -- set-plan <organizationId> <plan>`,
 * `npm run admin -- migrate` (apply pending migrations and isolation, then exit), and
 * `npm run admin -- backfill-phones [organizationId]` (read customers' phones into E.164).
 */
const USAGE = `usage: npm run admin -- <command>

commands:
  set-plan <organizationId> <${PLANS.join('|')}>   change an organization's plan
  migrate                                       apply pending migrations and isolation, then exit
  backfill-phones [organizationId]              read every customer phone not yet in E.164 (made before
                                                0039, or after a country change) with its organization's
                                                country, in batches; running it again does nothing
  help                                          show this text`;

async function main(argv: string[]) {
  const [command, ...args] = argv;
  // Asking for help is not a mistake: the usage goes to stdout and the exit status is 0.
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    if (command === undefined) {
      console.error(USAGE);
      return 2;
    }
    console.log(USAGE);
    return 0;
  }
  if (command === 'migrate' && args.length === 0) {
    const config = loadConfig();
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    try {
      const report = await migrateOnStart(config, database);
      console.log(
        report.statements.length === 0 && report.applied.length === 0
          ? 'schema is current: nothing to do'
          : `applied ${report.applied.length} migration(s) and ${report.statements.length} isolation statement(s)`,
      );
      return 0;
    } finally {
      await database.close();
    }
  }
  if (command === 'backfill-phones' && args.length <= 1) {
    const config = loadConfig();
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    try {
      await migrateOnStart(config, database);
      const read = await backfillPhones(database, args[0], (n) => console.log(`${n} customer phone(s) read`));
      console.log(
        read === 0
          ? 'every customer phone is read already: nothing to do'
          : `read ${read} customer phone(s) into E.164 (phoneE164; null where the number is not valid)`,
      );
      return 0;
    } finally {
      await database.close();
    }
  }
  if (command !== 'set-plan' || args.length !== 2) {
    console.error(USAGE);
    return 2;
  }
  const [orgId, plan] = args as [string, string];
  if (!PLANS.includes(plan as Plan)) {
    console.error(`plan must be one of ${PLANS.join(', ')}`);
    return 2;
  }
  const config = loadConfig();
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrateOnStart(config, database);
    // The plan change bumps the revocation generation in this same transaction: running API
    // processes stop serving the old plan at once (src/platform/auth/revocations.ts).
    const rows = await asPlatform(database.db, async (tx) => {
      const changed = await tx
        .update(organizations)
        .set({ plan, updatedAt: new Date() })
        .where(eq(organizations.id, orgId))
        .returning({ id: organizations.id });
      await bumpAuthGenerationAsPlatform(tx);
      return changed;
    });
    if (rows.length === 0) {
      console.error(`no organization ${orgId}`);
      return 1;
    }
    // The embedded database refuses this command while the API runs (one process per data
    // directory), so there the API sees the plan when it starts.
    console.log(
      `organization ${orgId} is now on the ${plan} plan (${
        database.kind === 'postgres' ? 'every running API process applies it at once' : 'the API sees it when started'
      })`,
    );
    return 0;
  } finally {
    await database.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
