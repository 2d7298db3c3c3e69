import { describe, expect, it } from 'vitest';
import { PLACEHOLDERS, placeholdersIn, renderTemplate, unknownPlaceholders } from './template-render.js';

describe('contract template placeholders', () => {
  const values = Object.fromEntries(PLACEHOLDERS.map((p) => [p, `<${p}>`])) as Record<
    (typeof PLACEHOLDERS)[number],
    string
  >;

  it('fills every known placeholder, tolerating inner spaces, and leaves other braces alone', () => {
    expect(renderTemplate('{{ customer.name }} / {{title}} / {{totalValue}} / { {x} }', values)).toBe(
      '<customer.name> / <title> / <totalValue> / { {x} }',
    );
  });

  it('names unknown placeholders and lists used ones once', () => {
    expect(unknownPlaceholders('{{customer.name}} {{customer.nickname}} {{price}}')).toEqual([
      'customer.nickname',
      'price',
    ]);
    expect(placeholdersIn('{{title}} {{title}} {{startDate}}')).toEqual(['title', 'startDate']);
  });

  it('does not re-expand placeholders that appear inside filled values', () => {
    expect(renderTemplate('{{customer.name}}', { ...values, 'customer.name': '{{title}}' })).toBe('{{title}}');
  });
});
