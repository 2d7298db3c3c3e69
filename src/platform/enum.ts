import { Type } from 'typebox';

/** A string enum schema (`enum` in JSON Schema/OpenAPI) typed as the union of its values. */
export const StringEnum = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], description: description ?? values.join(' | ') });

/** The values of a list filter (`status=sent,overdue`), or undefined when absent. */
export const listValues = <T extends string>(value: string | undefined): T[] | undefined =>
  value === undefined ? undefined : (value.split(',') as T[]);

/**
 * A query filter taking one or more of `values`, comma-separated (`status=sent,overdue`):
 * the office's questions often span several states ("unpaid" is sent, partially paid or overdue).
 * Its message when broken is written in platform/validation-messages.ts (`listPatternMessage`).
 */
export const EnumList = <T extends string>(values: readonly T[], description: string) =>
  Type.Unsafe<string>({
    type: 'string',
    pattern: enumListPattern(values),
    maxLength: 500,
    description: `${description}: one or more of ${values.join(', ')}, comma-separated (e.g. ${values.slice(0, 2).join(',')})`,
    examples: [values.slice(0, 2).join(',')],
  });

export const enumListPattern = (values: readonly string[]) => {
  const one = `(${values.join('|')})`;
  return `^${one}(,${one})*$`;
};
