/**
 * The layers of src/, as the folders' READMEs state them ("May import"), checked by
 * `npm run lint`. From the ground up:
 *
 *   src/config.ts      the configuration
 *   src/db/            client, migrations, Drizzle schema
 *   src/platform/      HTTP plumbing, tenancy, auth, the event outbox and catalogue, secrets
 *   src/background/    the task runner
 *   src/delivery/      the webhook delivery engine
 *   src/modules/<m>/   business modules
 *   src/flows/         operations that span several modules (handed to the routes that start them)
 *   src/modules/*.ts   the lists that name modules (routes, worker tasks, portal, attachments)
 *   src/app.ts, src/server.ts, src/worker.ts, src/admin.ts   the entry points
 *
 * A folder imports only folders below it. The few known exceptions are named in the
 * rule that allows them, each with its reason. Modules use each other through their exported
 * functions, one way only: rule no-module-cycle and test/platform/layers.test.ts fail on any
 * chain of module imports that leads back to its start, type-only imports included.
 */
const ENTRY = '^src/(app|server|worker|admin)[.]ts$';
const TOP_LISTS = '^src/modules/[^/]+[.]ts$';
const MODULE = '^src/modules/[^/]+/';
const WORKFLOW_SHAPES = '^src/modules/workflows/workflows[.]shapes[.]ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Files that import each other cannot be understood or tested one at a time. A loop closed only by `import type` (erased when compiled; today invoices.pdf/service, estimates.pdf/service, db client/drizzle-adapter) is allowed.',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'no-module-cycle',
      severity: 'error',
      comment:
        'src/modules/README.md: modules use each other one way, so no chain of imports between module folders (type-only imports included) leads back to where it started; an operation that needs both directions is a flow (src/flows/). A module and its own sub-folders may use each other (payments/ registers the routes of payments/intents/, which records payments through payments/); test/platform/layers.test.ts checks again with each sub-folder counted as its module.',
      scope: 'folder',
      from: { path: '^src/modules/[^/]+$' },
      to: { path: '^src/modules/[^/]+$', circular: true },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A file nothing imports is dead code (entry points and tests aside).',
      from: {
        orphan: true,
        pathNot: ['[.]d[.]ts$', '[.]test[.]ts$', ENTRY, '^src/console/public/', '^src/modules/portal/public/', '^src/modules/requests/public/'],
      },
      to: {},
    },
    {
      name: 'config-imports-nothing',
      severity: 'error',
      comment: 'src/config.ts reads the environment and imports nothing else of src/.',
      from: { path: '^src/config[.]ts$' },
      to: { path: '^src/' },
    },
    {
      name: 'db-imports-only-db',
      severity: 'error',
      comment: 'src/db/README.md: may import the configuration and nothing else of src/.',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: ['^src/db/', '^src/config[.]ts$'] },
    },
    {
      name: 'platform-imports-db-and-config',
      severity: 'error',
      comment: 'src/platform/README.md: may import src/db/ and the configuration; never a module, the delivery engine or the runner.',
      from: { path: '^src/platform/' },
      to: { path: '^src/', pathNot: ['^src/platform/', '^src/db/', '^src/config[.]ts$'] },
    },
    {
      name: 'background-imports-below',
      severity: 'error',
      comment: 'src/background/README.md: the runner is handed its tasks (src/modules/tasks.ts); it may import src/platform/, src/db/ and the configuration.',
      from: { path: '^src/background/' },
      to: { path: '^src/', pathNot: ['^src/background/', '^src/platform/', '^src/db/', '^src/config[.]ts$'] },
    },
    {
      name: 'delivery-imports-below',
      severity: 'error',
      comment: 'src/delivery/README.md: may import src/platform/, src/db/, src/background/ and the configuration; never a module.',
      from: { path: '^src/delivery/' },
      to: {
        path: '^src/',
        pathNot: ['^src/delivery/', '^src/platform/', '^src/db/', '^src/background/', '^src/config[.]ts$'],
      },
    },
    {
      name: 'modules-import-below-and-other-modules',
      severity: 'error',
      comment:
        'src/modules/README.md: a module may import src/platform/, src/db/, src/background/ (the task type), the configuration and other modules; never the lists at the top, the entry points or the console.',
      from: { path: MODULE, pathNot: WORKFLOW_SHAPES },
      to: { path: [TOP_LISTS, ENTRY, '^src/console/'] },
    },
    {
      name: 'workflow-paths-read-event-payloads',
      severity: 'error',
      comment:
        'EXCEPTION 1 of 1: the workflow condition paths (workflows.shapes.ts) are the event payload descriptions, so that file reads the top list src/modules/event-payloads.ts (a constant) instead of having it handed through every request; nothing else of it may climb.',
      from: { path: WORKFLOW_SHAPES },
      to: { path: [TOP_LISTS, ENTRY, '^src/console/'], pathNot: '^src/modules/event-payloads[.]ts$' },
    },
    {
      name: 'only-webhooks-module-uses-delivery',
      severity: 'error',
      comment: 'src/modules/README.md: the webhooks module checks endpoint URLs and wakes the engine with src/delivery/; no other module needs the engine (they emit through src/platform/events/).',
      from: { path: MODULE, pathNot: '^src/modules/webhooks/' },
      to: { path: '^src/delivery/' },
    },
    {
      name: 'modules-do-not-import-routes-of-others',
      severity: 'error',
      comment: 'src/modules/README.md: another module is used through its exported functions (*.refs.ts, its service), never its routes.',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/[^/]+/[^/]+[.]routes[.]ts$', pathNot: '^src/modules/$1/' },
    },
    {
      name: 'modules-never-import-flows',
      severity: 'error',
      comment:
        'src/flows/README.md: a flow calls several modules, so it stands above them all; the routes that start it receive it from src/modules/index.ts (plugin options, typed by the route module itself), and the worker from the top list src/modules/tasks.ts, instead of importing it.',
      from: { path: MODULE },
      to: { path: '^src/flows/' },
    },
    {
      name: 'flows-import-below',
      severity: 'error',
      comment: 'src/flows/README.md: a flow calls modules\' exported functions, src/platform/ and src/db/; never routes, the lists at the top or the entry points.',
      from: { path: '^src/flows/' },
      to: { path: ['[.]routes[.]ts$', TOP_LISTS, ENTRY, '^src/console/', '^src/delivery/'] },
    },
    {
      name: 'console-imports-nothing',
      severity: 'error',
      comment: 'src/console/README.md: it serves files; the pages call the API over HTTP.',
      from: { path: '^src/console/' },
      to: { path: '^src/', pathNot: '^src/console/' },
    },
    {
      name: 'only-entry-points-import-entry-points',
      severity: 'error',
      comment: 'src/app.ts, src/server.ts, src/worker.ts and src/admin.ts are the top: nothing below imports them.',
      from: { pathNot: ENTRY },
      to: { path: ENTRY },
    },
    {
      name: 'top-lists-are-imported-from-the-top',
      severity: 'error',
      comment: 'The lists that name modules (src/modules/*.ts) are handed down by the entry points, never imported from below.',
      from: { path: '^src/', pathNot: [ENTRY, TOP_LISTS, WORKFLOW_SHAPES] },
      to: { path: TOP_LISTS },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/console/public/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
