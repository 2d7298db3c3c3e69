import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * One row loader (issue 43): "this organization's row of a table by id, FOR UPDATE when it is
 * about to change, else 404" is src/platform/owned-rows.ts, used by every module. A module that
 * writes it again by hand fails here. Lookups that name more than one row by id (a parent as
 * well, a processor's id, many rows, a 400 on a body field) are not this shape and stay.
 * Read from the source as text.
 */

const HAND_WRITTEN = [
  // A select of the whole row by organization and id (or a local `mine`), locked or not, then a 404.
  /\.select\(\)\s*\.from\((\w+)\)\s*\.where\((?:and\(eq\(\1\.organizationId, ctx\.organizationId\), eq\(\1\.id, \w+\)\)|mine\(ctx, \w+\))\)(?:\s*\.for\('update'\))?;\s*if \(!\w+\) throw notFound\(/g,
  // A loader taking a lock flag.
  /lock \? await \w+\.for\('update'\) : await \w+;\s*if \(!\w+\) throw notFound\(/g,
];

function handWrittenLoaders(source: string): number {
  return HAND_WRITTEN.reduce((n, re) => n + [...source.matchAll(re)].length, 0);
}

function filesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesOf(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const SRC = join(import.meta.dirname, '../../src');

describe('row loaders', () => {
  it('sees a loader written by hand', () => {
    const samples = [
      `const [row] = await ctx.tx\n    .select()\n    .from(jobs)\n    .where(and(eq(jobs.organizationId, ctx.organizationId), eq(jobs.id, id)))\n    .for('update');\n  if (!row) throw notFound('Job');`,
      `const [row] = await ctx.tx.select().from(vendors).where(mine(ctx, id));\n  if (!row) throw notFound('Vendor');`,
      `const [row] = lock ? await q.for('update') : await q;\n  if (!row) throw notFound('Request');`,
      // Not the shape: a row under a parent, and a 400.
      `const [item] = await ctx.tx.select().from(items).where(and(eq(items.organizationId, ctx.organizationId), eq(items.jobId, id), eq(items.id, itemId)));\n  if (!item) throw notFound('Item');`,
      `const [row] = await ctx.tx.select().from(vendors).where(mine(ctx, id)).for('share');\n  if (!row) throw invalidField('vendorId', 'no such vendor');`,
    ];
    expect(samples.map(handWrittenLoaders)).toEqual([1, 1, 1, 0, 0]);
  });

  it('finds none in src/ but platform/owned-rows.ts', () => {
    const found: string[] = [];
    for (const file of filesOf(SRC)) {
      const path = relative(SRC, file).split(/[\\/]/).join('/');
      if (path === 'platform/owned-rows.ts' || path.endsWith('.test.ts')) continue;
      const n = handWrittenLoaders(readFileSync(file, 'utf8'));
      if (n > 0) found.push(`${path}: ${n}`);
    }
    expect(found).toEqual([]);
  });
});
