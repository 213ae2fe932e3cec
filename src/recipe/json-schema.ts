import { z } from 'zod';
import { recipeSchema } from './schema.js';

/** The recipe format as JSON Schema (docs/recipe.schema.json), from the zod schema: what a user writes. */
export function recipeJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(recipeSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    $schema: schema.$schema,
    title: 'dynamo-dev recipe',
    description: 'A dynamo-dev recipe: the processes `dynamo-dev up` starts (docs/recipes.md).',
    ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== '$schema')),
  };
}
