import { Type } from 'typebox';
import { DateTime, Envelope, Nullable } from '../../platform/schemas.js';
import { MemberId } from './crews.schemas.js';

export const Device = Type.Object(
  {
    id: Type.String({ description: 'dvc_…' }),
    name: Type.String(),
    memberId: Type.String({ description: 'The member the device acts as' }),
    userId: Type.String(),
    prefix: Type.String({ description: 'First characters of the token, to tell devices apart' }),
    createdAt: DateTime(),
    lastUsedAt: Nullable(DateTime()),
  },
  { additionalProperties: false },
);

export const CreatedDevice = Type.Object(
  {
    ...Device.properties,
    token: Type.String({ description: 'The device token (dev_…), shown only in this response; send as Bearer' }),
  },
  { additionalProperties: false },
);

export const CreateDeviceBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'e.g. "Dana\'s phone"' }),
    memberId: Type.Optional(MemberId('The member it acts as; default the caller. Another member needs owner/admin')),
  },
  { additionalProperties: false },
);

export const DeviceList = Envelope(Type.Array(Device));
export const CreatedDeviceResponse = Envelope(CreatedDevice);
