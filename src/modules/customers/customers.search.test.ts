import { describe, expect, it } from 'vitest';
import { searchPatterns, searchTextOf } from './customers.search.js';

describe('customer search text and patterns', () => {
  it('lower-cases name and email and keeps only the digits of the phone', () => {
    expect(searchTextOf({ name: 'Ann Lee', email: 'Ann@Example.COM', phone: '+1 (555) 010-2000' })).toBe(
      'ann lee\u001fann@example.com\u001f15550102000',
    );
    expect(searchTextOf({ name: 'Solo', email: null, phone: null })).toBe('solo\u001f\u001f');
  });

  it('matches phones by digits and escapes LIKE wildcards', () => {
    expect(searchPatterns('  Lee ')).toEqual(['%lee%']);
    expect(searchPatterns('(555) 010-2000')).toEqual(['%(555) 010-2000%', '%5550102000%']);
    expect(searchPatterns('5550102')).toEqual(['%5550102%']);
    expect(searchPatterns('100%_a\\b')).toEqual(['%100\\%\\_a\\\\b%']);
    expect(searchPatterns('   ')).toEqual([]);
  });
});
