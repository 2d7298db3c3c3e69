import { Type } from 'typebox';
import { DateTime, Envelope, PageQuery } from '../../platform/schemas.js';
import { PLACEHOLDERS } from './template-render.js';

const BodyDoc = `Template text. Placeholders in double braces are filled when a contract is created: ${PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ')}. Any other placeholder → 400.`;

export const ContractTemplate = Type.Object(
  {
    id: Type.String({ description: 'ctp_…' }),
    name: Type.String(),
    body: Type.String({ description: BodyDoc }),
    placeholders: Type.Array(Type.String(), { description: 'The placeholders the body uses' }),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { additionalProperties: false },
);

export const CreateTemplateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
    body: Type.String({ minLength: 1, maxLength: 100_000, description: BodyDoc }),
  },
  { additionalProperties: false },
);

export const UpdateTemplateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' })),
    body: Type.Optional(Type.String({ minLength: 1, maxLength: 100_000, description: BodyDoc })),
  },
  {
    additionalProperties: false,
    description: 'Partial update. Contracts already created keep the text they were created with.',
  },
);

export const TemplateListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
export const TemplateResponse = Envelope(ContractTemplate);
export const TemplateListResponse = Envelope(Type.Array(ContractTemplate));
