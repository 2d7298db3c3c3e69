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

/** The rules broken by a tree of `files` (path → source), by rule name. */
async function violations(files: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'layers-'));
  dirs.push(dir);
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(join(dir, dirname(path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  const result = await cruise(['src'], {
    baseDir: dir,
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

/*
 * Modules use each other one way. A pair that imports each other both ways (type-only
 * imports included) would be named here with its reason, as in src/modules/README.md; there
 * is none: an operation that needs both directions is a flow (src/flows/). A new pair fails
 * this test, and so does a named pair that is gone (its entry goes too).
 */
const TWO_WAY_PAIRS: Record<string, string> = {};

describe('modules of src/', () => {
  it('import each other both ways only in the named pairs', async () => {
    const result = await cruise(['src'], {
      tsPreCompilationDeps: true,
      doNotFollow: { path: 'node_modules' },
      includeOnly: '^src/modules/',
    });
    const moduleOf = (path: string) => /^src\/modules\/([^/]+)\//.exec(path)?.[1];
    const edges = new Set<string>();
    for (const m of (result.output as ICruiseResult).modules) {
      const from = moduleOf(m.source);
      for (const d of m.dependencies) {
        const to = moduleOf(d.resolved);
        if (from && to && from !== to) edges.add(`${from} ${to}`);
      }
    }
    const pairs = [...edges]
      .filter((e) => edges.has(e.split(' ').reverse().join(' ')))
      .map((e) => e.split(' ').sort().join(' '));
    expect([...new Set(pairs)].sort()).toEqual(Object.keys(TWO_WAY_PAIRS).sort());
  });
});
