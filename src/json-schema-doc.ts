import { z } from 'zod';

/** A zod schema as a published JSON Schema file (docs/*.schema.json): $schema first, then a title and description. */
export function jsonSchemaDoc(schema: z.ZodType, io: 'input' | 'output', title: string, description: string): Record<string, unknown> {
  const js = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return { $schema: js.$schema, title, description, ...Object.fromEntries(Object.entries(js).filter(([k]) => k !== '$schema')) };
}
