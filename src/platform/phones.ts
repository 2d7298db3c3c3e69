import { type CountryCode, isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js';

/*
 * Phone numbers as a text provider wants them (E.164, `+15551234567`), parsed by libphonenumber-js
 * (Google's libphonenumber metadata), never by a hand-written pattern: a number written without
 * `+` is read in the organization's `country` (settings, ISO 3166 alpha-2, default US).
 */

/** Whether libphonenumber knows this ISO 3166 alpha-2 code (settings `country`). */
export function isPhoneCountry(code: string): boolean {
  return isSupportedCountry(code);
}

/** `phone` in E.164, or null when it is not a valid number for `country` (or international with `+`). */
export function toE164(phone: string | null | undefined, country: string): string | null {
  if (!phone || phone.trim() === '') return null;
  const parsed = parsePhoneNumberFromString(phone, isSupportedCountry(country) ? (country as CountryCode) : undefined);
  return parsed?.isValid() ? parsed.number : null;
}
