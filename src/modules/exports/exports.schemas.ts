import { type Static, Type } from 'typebox';
import { StringEnum } from '../../platform/enum.js';
import { DateTime, Envelope, Nullable, PageQuery } from '../../platform/schemas.js';
import { EXPORT_RESOURCE_NAMES } from './exports.registry.js';

export const EXPORT_FORMATS = ['ndjson', 'csv'] as const;
export const EXPORT_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

export const CreateExportBody = Type.Object(
  {
    resources: Type.Optional(
      Type.Array(StringEnum(EXPORT_RESOURCE_NAMES, `A list route's name: ${EXPORT_RESOURCE_NAMES.join(', ')}`), {
        minItems: 1,
        maxItems: EXPORT_RESOURCE_NAMES.length,
        uniqueItems: true,
        description: 'Which resources to export (default: every one); an unknown name → 400',
      }),
    ),
    format: StringEnum(
      EXPORT_FORMATS,
      'ndjson (one JSON object a line) | csv (objects flattened to dotted columns, arrays as JSON)',
    ),
  },
  { additionalProperties: false },
);
export type CreateExportBodyT = Static<typeof CreateExportBody>;

export const ExportView = Type.Object(
  {
    id: Type.String(),
    status: StringEnum(EXPORT_STATUSES, 'queued | running | completed | failed'),
    format: StringEnum(EXPORT_FORMATS),
    resources: Type.Array(Type.String(), { description: 'The resources in the archive, one file each' }),
    progress: Type.Object({
      rows: Type.Integer({ minimum: 0, description: 'Rows written so far' }),
      totalRows: Nullable(
        Type.Integer({ minimum: 0, description: 'Rows to write; null until the worker has counted them' }),
      ),
      percent: Type.Integer({
        minimum: 0,
        maximum: 100,
        description: 'rows ÷ totalRows in percent (100 once completed)',
      }),
    }),
    sizeBytes: Nullable(Type.Integer({ minimum: 0, description: 'Size of the zip; null until completed' })),
    expiresAt: Nullable(DateTime('When the archive is removed: 7 days after completion; null until completed')),
    createdAt: DateTime(),
  },
  { additionalProperties: false },
);
export type ExportViewT = Static<typeof ExportView>;

export const ExportResponse = Envelope(ExportView);
export const ExportList = Envelope(Type.Array(ExportView));
export const ExportListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const ZipResponse = {
  description: 'The archive: one <resource>.ndjson or <resource>.csv per resource, and manifest.json',
  content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } },
};
