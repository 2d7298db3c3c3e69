/*
 * Customer search (decisions §4): a case-insensitive substring of the name, the
 * email, the phone (compared by its digits), the billing address or a property's address. The service keeps
 * one lower-cased text per customer; a search becomes one or two LIKE patterns
 * on it, which the trigram index answers for terms of three characters or more.
 */

/** Separates the fields so a term never matches across two of them. */
export const SEP = '\u001f';

export const digitsOf = (text: string | null | undefined) => (text ?? '').replace(/\D+/g, '');

export function searchTextOf(c: { name: string; email: string | null; phone: string | null }): string {
  return [c.name.toLowerCase(), (c.email ?? '').toLowerCase(), digitsOf(c.phone)].join(SEP);
}

/** An address as searched: its parts lower-cased, joined by spaces ("12 oak ave springfield il 62701"). */
export function addressSearchText(a: {
  street: string | null;
  city: string | null;
  state: string | null;
  zip: string | null;
}): string {
  return [a.street, a.city, a.state, a.zip]
    .filter((x): x is string => Boolean(x))
    .join(' ')
    .toLowerCase();
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (ch) => `\\${ch}`);

/** Looks like a phone number: digits with the usual punctuation only. */
const PHONE_LIKE = /^[\d\s().+-]+$/;

/** The LIKE patterns for a search term: its lower-cased text, and its digits when it looks like a phone. */
export function searchPatterns(term: string): string[] {
  const text = term.trim().toLowerCase();
  if (text === '') return [];
  const patterns = [`%${escapeLike(text)}%`];
  const digits = digitsOf(text);
  if (PHONE_LIKE.test(text) && digits !== '' && digits !== text) patterns.push(`%${digits}%`);
  return patterns;
}
