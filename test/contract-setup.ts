import { afterAll } from 'vitest';
import { takeReport } from './contract.js';

// Every test file: the responses and webhook bodies it received must match /openapi.json (test/contract.ts).
afterAll(() => {
  const { mismatches } = takeReport();
  if (mismatches.length === 0) return;
  const unique = [...new Set(mismatches)];
  throw new Error(
    `${mismatches.length} response(s) or event(s) do not match /openapi.json:\n${unique
      .slice(0, 30)
      .map((m) => `  - ${m}`)
      .join('\n')}${unique.length > 30 ? `\n  … and ${unique.length - 30} more` : ''}`,
  );
});
