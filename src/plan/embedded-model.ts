import { fileURLToPath } from 'node:url';

// The model dynamo-dev ships (models/tiny in the package): a config, a tokenizer and a chat
// template, no weights, made by test/dynamo/make-model.py (docs/setup.md says how to make it
// again). The mocker engine simulates inference, so it serves this on any machine with neither a
// GPU nor Hugging Face; the built-in `mocker` recipe names it. Pure path arithmetic.

/** The id recipes name it by, and the name the frontend lists it under. */
export const EMBEDDED_MODEL = 'dynamo-dev/tiny';

/** The folder: <package>/models/tiny (from dist/plan/ and src/plan/ alike). */
export const EMBEDDED_MODEL_DIR = fileURLToPath(new URL('../../models/tiny', import.meta.url));

export const isEmbeddedModel = (model: string): boolean => model === EMBEDDED_MODEL;

/** Where an engine reads the model from: the folder for the embedded id, else the model as given. */
export const modelSource = (model: string): string => (isEmbeddedModel(model) ? EMBEDDED_MODEL_DIR : model);
