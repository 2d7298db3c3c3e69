import { Type } from 'typebox';
import { StringEnum } from '../../../platform/enum.js';
import { DateTime, Envelope, Money, Nullable, PageQuery } from '../../../platform/schemas.js';
import { INTENT_SOURCES, INTENT_STATUSES } from './payment-intents.states.js';

export const PaymentIntent = Type.Object(
  {
    id: Type.String({ description: 'pint_…' }),
    invoiceId: Type.String(),
    amount: Type.Number({ description: 'What the customer is asked to pay' }),
    currency: Type.String({ description: "ISO 4217, the organization's currency" }),
    status: StringEnum(
      INTENT_STATUSES,
      'requires_payment_method (waiting for the customer, or the last attempt failed), processing, succeeded (the payment is recorded), canceled',
    ),
    processorIntentId: Type.String({ description: 'Stripe PaymentIntent id (pi_…)' }),
    clientSecret: Nullable(
      Type.String({ description: "Stripe's client secret: the browser confirms the payment with it (Stripe.js)" }),
    ),
    source: StringEnum(INTENT_SOURCES, 'API: created by the office; PORTAL: by the customer from the invoice link'),
    paymentId: Nullable(Type.String({ description: 'The payment recorded when it succeeded (pay_…)' })),
    lastError: Nullable(Type.String({ description: 'Why the last attempt failed (payment_intent.payment_failed)' })),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { additionalProperties: false },
);

export const CreateIntentBody = Type.Object(
  {
    invoiceId: Type.String({ minLength: 1, maxLength: 64, description: 'A sent, partially paid or overdue invoice' }),
    amount: Type.Optional(Money('Greater than 0, at most the balance; default: the whole balance')),
  },
  { additionalProperties: false },
);

export const PortalPayBody = Type.Optional(
  Type.Object(
    { amount: Type.Optional(Money('Greater than 0, at most the balance; default: the whole balance')) },
    { additionalProperties: false },
  ),
);

export const IntentListQuery = Type.Object({
  invoiceId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  status: Type.Optional(StringEnum(INTENT_STATUSES)),
  ...PageQuery,
});

export const IntentResponse = Envelope(PaymentIntent);
export const IntentListResponse = Envelope(Type.Array(PaymentIntent));
