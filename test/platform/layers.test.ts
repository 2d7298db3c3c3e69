import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise, type IConfiguration, type ICruiseResult } from 'dependency-cruiser';
import { afterAll, describe, expect, it } from 'vitest';

/*
 * `npm run lint` runs dependency-cruiser with .dependency-cruiser.cjs over src/. This checks
 * that its rules catch what they are there for, on a small tree made in a temporary folder
 * with the same folder names: an import that climbs a layer fails lint, and the layers as
 * they should be pass.
 */

const config = createRequire(import.meta.url)('../../.dependency-cruiser.cjs') as IConfiguration;
const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Writes a tree of `files` (path → source) into a temporary folder; returns the folder. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'layers-'));
  dirs.push(dir);
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(join(dir, dirname(path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  return dir;
}

/** The rules broken by a tree of `files` (path → source), by rule name. */
async function violations(files: Record<string, string>): Promise<string[]> {
  const result = await cruise(['src'], {
    baseDir: tree(files),
    validate: true,
    ruleSet: { forbidden: config.forbidden ?? [] },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
  });
  const output = result.output as ICruiseResult;
  return [...new Set(output.summary.violations.map((v) => v.rule.name))].sort();
}

/** A tiny house in the project's layers: the entry point lists the module's routes, which are handed the flow. */
const house: Record<string, string> = {
  'src/config.ts': 'export const config = {};\n',
  'src/db/client.ts': "import { config } from '../config';\nexport const db = config;\n",
  'src/platform/tenancy.ts': "import { db } from '../db/client';\nexport const tenancy = db;\n",
  'src/modules/shop/shop.service.ts':
    "import { tenancy } from '../../platform/tenancy';\nexport const sell = () => tenancy;\n",
  'src/modules/shop/shop.routes.ts':
    "import { sell } from './shop.service';\nexport default (flows: { checkout(): unknown }) => [sell, flows];\n",
  'src/flows/checkout.ts':
    "import { sell } from '../modules/shop/shop.service';\nexport const checkout = () => sell();\n",
  'src/modules/index.ts':
    "import { checkout } from '../flows/checkout';\nimport shop from './shop/shop.routes';\nexport const modules = [shop({ checkout })];\n",
  'src/app.ts': "import { modules } from './modules/index';\nexport const app = modules;\n",
};

describe('the layer rules of npm run lint', () => {
  it('pass a tree whose imports all point down', async () => {
    expect(await violations(house)).toEqual([]);
  });

  it('fail an import from the platform up into a module', async () => {
    const climbing = {
      ...house,
      'src/platform/tenancy.ts':
        "import { db } from '../db/client';\nimport { sell } from '../modules/shop/shop.service';\nexport const tenancy = [db, sell];\n",
    };
    expect(await violations(climbing)).toContain('platform-imports-db-and-config');
  });

  it('fail a module importing a flow, and a module importing the top list', async () => {
    const routes = 'src/modules/shop/shop.routes.ts';
    expect(
      await violations({
        ...house,
        [routes]: "import { checkout } from '../../flows/checkout';\nexport default () => checkout;\n",
      }),
    ).toContain('modules-never-import-flows');
    expect(
      await violations({
        ...house,
        [routes]: "import { modules } from '../index';\nexport default () => modules;\n",
      }),
    ).toContain('modules-import-below-and-other-modules');
  });

  it('fail the database layer importing the platform', async () => {
    const climbing = {
      ...house,
      'src/db/client.ts': "import { tenancy } from '../platform/tenancy';\nexport const db = tenancy;\n",
    };
    expect(await violations(climbing)).toEqual(expect.arrayContaining(['db-imports-only-db', 'no-circular']));
  });
});

/**
 * The loops among the modules of the tree at `baseDir` (the repository when omitted): each
 * strongly connected group of two or more modules, a sub-folder counted as its module
 * (`jobs/schedules/` is jobs), type-only imports included. Sorted, for comparing.
 */
async function moduleCycles(baseDir?: string): Promise<string[][]> {
  const result = await cruise(['src'], {
    ...(baseDir ? { baseDir } : {}),
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/modules/',
  });
  const moduleOf = (path: string) => /^src\/modules\/([^/]+)\//.exec(path)?.[1];
  const next = new Map<string, Set<string>>();
  for (const m of (result.output as ICruiseResult).modules) {
    const from = moduleOf(m.source);
    if (!from) continue;
    if (!next.has(from)) next.set(from, new Set());
    for (const d of m.dependencies) {
      const to = moduleOf(d.resolved);
      if (to && to !== from) next.get(from)?.add(to);
    }
  }
  // Tarjan's strongly connected components: a group of two or more modules is a loop.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const groups: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop();
      if (w) group.push(w);
    } while (w && w !== v);
    if (group.length > 1) groups.push(group.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return groups.sort();
}

/*
 * Modules use each other one way: no chain of imports between modules leads back to where it
 * started, two modules or five. An operation that needs both directions is a flow (src/flows/);
 * a document module reaches its customer links through portal-links/, below the portal.
 */
describe('modules of src/', () => {
  // Cruising the whole of src/ takes over 30 s on a loaded machine (the table-owners test allows its cruise as long).
  it('import each other without a loop', async () => {
    expect(await moduleCycles()).toEqual([]);
  }, 120_000);

  it('are found in a loop of three modules planted in a small tree, by this test and by npm run lint', async () => {
    // shop → stock → till → shop, no file importing itself round: the loop closes by a
    // type-only import from a sub-folder of till, and both still count.
    const loop = {
      ...house,
      'src/modules/shop/shop.service.ts':
        "import { tenancy } from '../../platform/tenancy';\nimport { count } from '../stock/stock.service';\nexport const sell = () => [tenancy, count()];\n",
      'src/modules/shop/shop.types.ts': 'export interface Sale {\n  cents: number;\n}\n',
      'src/modules/stock/stock.service.ts':
        "import { ring } from '../till/till.service';\nexport const count = () => ring();\n",
      'src/modules/till/till.service.ts': "import { tax } from './tax/tax';\nexport const ring = () => tax();\n",
      'src/modules/till/tax/tax.ts':
        "import type { Sale } from '../../shop/shop.types';\nexport const tax = (sale?: Sale) => sale;\n",
    };
    expect(await moduleCycles(tree(loop))).toEqual([['shop', 'stock', 'till']]);
    expect(await violations(loop)).toEqual(['no-module-cycle']);
    // The same tree without the closing import has no loop.
    const open = { ...loop, 'src/modules/till/tax/tax.ts': 'export const tax = (sale?: { cents: number }) => sale;\n' };
    const { 'src/modules/shop/shop.types.ts': _unused, ...withoutTypes } = open;
    expect(await moduleCycles(tree(withoutTypes))).toEqual([]);
    expect(await violations(withoutTypes)).toEqual([]);
  });
});
