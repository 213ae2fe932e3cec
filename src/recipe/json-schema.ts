import { jsonSchemaDoc } from '../json-schema-doc.js';
import { recipeSchema } from './schema.js';

/** The recipe format as JSON Schema (docs/recipe.schema.json), from the zod schema: what a user writes. */
export const recipeJsonSchema = (): Record<string, unknown> =>
  jsonSchemaDoc(recipeSchema, 'input', 'dynamo-dev recipe', 'A dynamo-dev recipe: the processes `dynamo-dev up` starts (docs/recipes.md).');
