import { Type } from 'typebox';
import { DateTime, Envelope } from '../../platform/schemas.js';

export const User = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    email: Type.String(),
    emailVerified: Type.Boolean(),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { additionalProperties: true },
);

export const SignUpBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    email: Type.String({ format: 'email', maxLength: 254 }),
    password: Type.String({ minLength: 8, maxLength: 128 }),
  },
  { additionalProperties: false },
);

export const SignInBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 128 }),
    rememberMe: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const SessionResponse = Envelope(
  Type.Object({
    user: User,
    session: Type.Optional(
      Type.Object({
        id: Type.String(),
        expiresAt: DateTime(),
        activeOrganizationId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      }),
    ),
  }),
);

export const SignedOut = Envelope(Type.Object({ success: Type.Boolean() }));
