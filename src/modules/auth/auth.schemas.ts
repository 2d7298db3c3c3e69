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

const closed = { additionalProperties: false } as const;

export const PasswordResetRequestBody = Type.Object(
  { email: Type.String({ format: 'email', maxLength: 254, description: "The account's email address" }) },
  closed,
);

export const PasswordResetBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 512, description: 'The `token` of the link in the reset mail' }),
    newPassword: Type.String({ minLength: 8, maxLength: 128 }),
  },
  closed,
);

export const PasswordResetRequested = Envelope(
  Type.Object({
    status: Type.Literal(true),
    message: Type.String({ description: 'The same for every address, known or not' }),
  }),
);

export const PasswordResetDone = Envelope(Type.Object({ status: Type.Literal(true) }));
const Password = Type.String({ minLength: 8, maxLength: 128 });
const CurrentPassword = Type.String({ minLength: 1, maxLength: 128 });
const Email = Type.String({ format: 'email', maxLength: 254 });
/** A token from a link or a session (Better Auth's are a few dozen characters). */
const Token = Type.String({ minLength: 1, maxLength: 512 });
/** Where Better Auth sends the browser afterwards. */
const Url = Type.Optional(Type.String({ minLength: 1, maxLength: 2048 }));

/**
 * The bodies of the Better Auth routes that are passed through undocumented (POST
 * /api/auth/<path>), validated like every other route's before Better Auth sees them: a
 * wrong field answers 400 naming it, where Better Auth would have written it (a null
 * `name` reached the database as NULL: a not-null violation, 500). Closed objects: a
 * field Better Auth would take that is not listed here is refused.
 */
export const PASS_THROUGH_BODIES = {
  'update-user': Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      image: Type.Optional(Type.Union([Type.String({ maxLength: 2048 }), Type.Null()])),
    },
    closed,
  ),
  'change-password': Type.Object(
    { newPassword: Password, currentPassword: CurrentPassword, revokeOtherSessions: Type.Optional(Type.Boolean()) },
    closed,
  ),
  'change-email': Type.Object({ newEmail: Email, callbackURL: Url }, closed),
  'delete-user': Type.Object(
    { password: Type.Optional(CurrentPassword), token: Type.Optional(Token), callbackURL: Url },
    closed,
  ),
  'verify-password': Type.Object({ password: CurrentPassword }, closed),
  'send-verification-email': Type.Object({ email: Email, callbackURL: Url }, closed),
  'revoke-session': Type.Object({ token: Token }, closed),
  // The session's one extra field (the active organization) is not the client's to set.
  'update-session': Type.Object({}, closed),
} as const;
