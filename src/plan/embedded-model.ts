import { fileURLToPath } from 'node:url';

// The model dynamo-dev ships: a config, a tokenizer and a chat template, no weights, made by
// test/dynamo/make-model.py (docs/setup.md says how to make it again). The mocker engine simulates
// inference, so it serves this on any machine with neither a GPU nor Hugging Face; the built-in
// `mocker` recipe names it. Pure path arithmetic.
//
// It lives in the package as a Hugging Face cache entry (models/hub/models--dynamo-dev--tiny:
// refs/main and snapshots/<rev>/), not a bare folder, because frontends before 1.4 read a model's
// files by its served name from their Hugging Face cache: a 1.3.1 worker publishes its card's
// files as hf://dynamo-dev/tiny/config.json ... (seen in its discovery records), and the
// frontend's hub::from_hf looks for that name's snapshot before any download ("Found cached model
// ... skipping download", ai-dynamo-runtime 1.3.1 _core, lib/llm/src/hub.rs). From 1.4 the worker
// serves those files itself (http://<host>:<system port>/v1/metadata/...), and the folder is all
// that is read. So workers read the snapshot folder, and older frontends get the cache
// (releaseFor(...).facts.cardFilesFromWorker; plan/build.ts).

/** The id recipes name it by, and the name the frontend lists it under. */
export const EMBEDDED_MODEL = 'dynamo-dev/tiny';

/** A Hugging Face hub cache (HF_HUB_CACHE) that holds the embedded model under its id: <package>/models/hub. */
export const EMBEDDED_HUB_CACHE = fileURLToPath(new URL('../../models/hub', import.meta.url));

/** The revision its snapshot is filed under (refs/main names it). */
export const EMBEDDED_REVISION = '0'.repeat(40);

/** The folder the mocker reads: the snapshot in that cache (from dist/plan/ and src/plan/ alike). */
export const EMBEDDED_MODEL_DIR = fileURLToPath(new URL(`../../models/hub/models--dynamo-dev--tiny/snapshots/${EMBEDDED_REVISION}`, import.meta.url));

export const isEmbeddedModel = (model: string): boolean => model === EMBEDDED_MODEL;

/** Where an engine reads the model from: the folder for the embedded id, else the model as given. */
export const modelSource = (model: string): string => (isEmbeddedModel(model) ? EMBEDDED_MODEL_DIR : model);
