import { type Static, Type } from 'typebox';
import { Envelope, Money, Nullable } from '../../platform/schemas.js';

const Text = (maxLength: number, description: string) => Nullable(Type.String({ maxLength, description }));

const fields = {
  timezone: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'IANA timezone, e.g. America/Chicago; "today" and date filters use it',
  }),
  taxRate: Type.Number({
    minimum: 0,
    maximum: 100,
    description: 'Percent, 0..100, at most three decimals (8.25 = 8.25 %)',
  }),
  currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, upper case; default USD' }),
  paymentTermsDays: Type.Integer({
    minimum: 0,
    maximum: 365,
    description: 'Default invoice due date = invoice date + this; default 30',
  }),
  visitHorizonDays: Type.Integer({
    minimum: 1,
    maximum: 366,
    description: 'Recurring schedules have their visits made this many days ahead (today included); default 56',
  }),
  visitReminderHours: Nullable(
    Type.Integer({
      minimum: 1,
      maximum: 168,
      description: 'Mail the customer this many hours before a visit (its startTime, or 08:00); null = no reminders',
    }),
  ),
  depot: Nullable(
    Type.Object(
      {
        lat: Type.Number({ minimum: -90, maximum: 90 }),
        lng: Type.Number({ minimum: -180, maximum: 180 }),
      },
      { additionalProperties: false, description: 'Where crews start their day (GET /api/jobs/route); null = none' },
    ),
  ),
  notifyOwners: Type.Boolean({
    description:
      "Mail the organization's owners when a customer approves an estimate or signs a contract through their link; default true",
  }),
  billApprovalThreshold: Nullable(Money('Vendor bills above this amount need approval; null = no approval step')),
  companyName: Text(200, 'Shown on documents and emails'),
  companyEmail: Nullable(
    Type.String({ format: 'email', maxLength: 254, description: 'Reply-to address on documents' }),
  ),
  companyPhone: Text(40, 'Shown on documents'),
  companyAddress: Text(500, 'Shown on documents'),
  bookingSlug: Nullable(
    Type.String({
      pattern: '^[a-z0-9-]{3,40}$',
      description:
        'The public booking form lives at /book/{bookingSlug} (requests from the public: docs/requests.md); 3..40 of a-z, 0-9 and "-", unique among all organizations (taken → 409 CONFLICT); null = no public form (its paths answer 404)',
    }),
  ),
  stripePublishableKey: Nullable(
    Type.String({
      pattern: '^pk_(test|live)_[A-Za-z0-9_]{8,250}$',
      description:
        "Stripe's publishable key (pk_…, public by design): the customer page loads Stripe.js with it to take card payments; card payment is offered there only when this and stripeSecretKey are both set",
    }),
  ),
  twilioAccountSid: Nullable(
    Type.String({ pattern: '^AC[0-9a-fA-F]{32}$', description: 'Twilio account SID (AC…), used with twilioAuthToken' }),
  ),
  smsFrom: Nullable(
    Type.String({
      pattern: '^(\\+[1-9][0-9]{6,14}|MG[0-9a-fA-F]{32})$',
      description: 'Texts are sent from this number in E.164 (+15551234567) or this Twilio Messaging Service SID (MG…)',
    }),
  ),
  smsEnabled: Type.Boolean({ description: 'Text messages are sent at all; default false' }),
  smsQuietHours: Nullable(
    Type.Object(
      {
        start: Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM local' }),
        end: Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM local' }),
      },
      {
        additionalProperties: false,
        description:
          'Automatic texts (reminders, document links) falling between start and end (local time, may span midnight) wait for end; manual and on-my-way texts go at once; null = none',
      },
    ),
  ),
  reminderChannels: Type.Array(Type.Enum(['email', 'sms']), {
    maxItems: 2,
    description: 'How visit reminders reach the customer; default ["email"]',
  }),
  country: Type.String({
    pattern: '^[A-Z]{2}$',
    description: 'ISO 3166 two-letter country: phone numbers written without + are read as this country’s; default US',
  }),
};

const writeOnly = {
  twilioAuthToken: Nullable(
    Type.String({
      pattern: '^[A-Za-z0-9]{16,128}$',
      description:
        'Write-only: the Twilio auth token of twilioAccountSid; sends texts and checks the X-Twilio-Signature of Twilio’s callbacks; stored encrypted, never shown back (GET shows twilioConfigured); null removes it',
    }),
  ),
  stripeWebhookSecret: Nullable(
    Type.String({
      pattern: '^whsec_[A-Za-z0-9+/=_-]{8,200}$',
      description:
        'Write-only: the signing secret (whsec_…) of the Stripe endpoint pointing at POST /api/payments/stripe/{organizationId}; stored encrypted, never shown back (GET shows stripeWebhookConfigured); null removes it',
    }),
  ),
  stripeSecretKey: Nullable(
    Type.String({
      pattern: '^(sk|rk)_(test|live)_[A-Za-z0-9_]{8,250}$',
      description:
        'Write-only: the Stripe secret API key (sk_… or a restricted rk_… allowed to write PaymentIntents and read balance transactions) that creates payment intents; stored encrypted, never shown back (GET shows stripeSecretKeyConfigured); null removes it',
    }),
  ),
};

export const UpdateSettingsBody = Type.Object(
  Object.fromEntries(Object.entries({ ...fields, ...writeOnly }).map(([k, v]) => [k, Type.Optional(v)])) as {
    [K in keyof (typeof fields & typeof writeOnly)]: ReturnType<
      typeof Type.Optional<(typeof fields & typeof writeOnly)[K]>
    >;
  },
  {
    additionalProperties: false,
    description: '`plan` is read-only here (operators change it with `npm run admin -- set-plan`)',
  },
);
export type UpdateSettingsInput = Static<typeof UpdateSettingsBody>;

export const Settings = Type.Object(
  {
    ...fields,
    billApprovalThreshold: Nullable(Type.Number()),
    stripeWebhookConfigured: Type.Boolean({
      description: 'Whether a Stripe webhook signing secret is set (the secret itself is never shown)',
    }),
    stripeSecretKeyConfigured: Type.Boolean({
      description: 'Whether a Stripe secret API key is set, so payment intents can be created (the key is never shown)',
    }),
    twilioConfigured: Type.Boolean({
      description: 'Whether twilioAccountSid and twilioAuthToken are both set (the token is never shown)',
    }),
    plan: Type.Enum(['starter', 'pro', 'business'], { description: 'Read-only' }),
  },
  { additionalProperties: false },
);

export const SettingsResponse = Envelope(Settings);
