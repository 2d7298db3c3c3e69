import { type Static, Type } from 'typebox';
import { DateTime, Envelope, Nullable } from '../../platform/schemas.js';
import { MemberId } from './crews.schemas.js';
import { Lat, Lng } from './time-entries.schemas.js';

const LocationPoint = Type.Object(
  {
    lat: Lat,
    lng: Lng,
    accuracy: Type.Optional(Type.Number({ minimum: 0, maximum: 100_000, description: 'Metres' })),
    recordedAt: Type.String({
      format: 'date-time',
      description: 'When the phone took the point; at most 5 minutes in the future',
    }),
  },
  { additionalProperties: false },
);

export const PostLocationsBody = Type.Object(
  {
    points: Type.Array(LocationPoint, {
      minItems: 1,
      maxItems: 500,
      description: "1..500 points of the caller's member; a point already stored (same recordedAt) is skipped",
    }),
  },
  { additionalProperties: false },
);
export type PostLocationsInput = Static<typeof PostLocationsBody>;

export const StoredPoint = Type.Object(
  {
    memberId: Type.String(),
    userId: Type.String(),
    lat: Type.Number(),
    lng: Type.Number(),
    accuracy: Nullable(Type.Number()),
    recordedAt: DateTime(),
  },
  { additionalProperties: false },
);

export const PostLocationsResponse = Envelope(
  Type.Object(
    {
      accepted: Type.Integer({ description: 'Points stored' }),
      duplicates: Type.Integer({ description: 'Points skipped because that recordedAt was already stored' }),
    },
    { additionalProperties: false },
  ),
);

export const TrailQuery = Type.Object(
  {
    memberId: MemberId('Whose trail'),
    from: Type.String({ description: 'Start: a date (whole day, org timezone) or a date-time (inclusive)' }),
    to: Type.String({ description: 'End: a date (through that day) or a date-time' }),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 5000, default: 1000, description: 'At most this many points (1..5000)' }),
    ),
  },
  { additionalProperties: false },
);

export const LatestList = Envelope(Type.Array(StoredPoint));
export const TrailResponse = Envelope(Type.Array(StoredPoint));
