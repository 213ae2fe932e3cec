// Limits of recipe input, in a module of their own: host/files/recipes.ts checks a file's size before
// reading it without loading the YAML parser and the schema (recipe/load.ts).

/** A recipe is a page of YAML; anything near this size is not one (and must not cost gigabytes). */
export const MAX_RECIPE_BYTES = 1024 * 1024;
