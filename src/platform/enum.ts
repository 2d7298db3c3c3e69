import { Type } from 'typebox';

/** A string enum schema (`enum` in JSON Schema/OpenAPI) typed as the union of its values. */
export const StringEnum = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], description: description ?? values.join(' | ') });
