// Fixes from the signature table name MODEL, PROCESS and RUN where the place decides them. Pure, and
// small on purpose: `up`'s report and doctor load it without the signature table.

/**
 * A signature's fix for one place: the table's placeholders filled where the caller knows them
 * (MODEL: the run's model, PROCESS: the process whose log matched, RUN: its run), so the command can be pasted.
 * One unknown stays a placeholder for the user to fill.
 */
export function fillFix(fix: string, at: { model?: string | null; process?: string | null; run?: string | null }): string {
  let s = fix;
  if (at.model) s = s.replace(/\bMODEL\b/g, at.model);
  if (at.process) s = s.replace(/\bPROCESS\b/g, at.process);
  if (at.run) s = s.replace(/\bRUN\b/g, at.run);
  return s;
}

// A Hugging Face cache folder: `models--ORG--NAME` (FACTS §6), `models--NAME` for a repo without an
// owner; repo ids never contain `--` (huggingface_hub validate_repo_id), so the split is exact.
const CACHE_FOLDER = /\bmodels--((?:[\w.]|-(?!-))+)(?:--((?:[\w.]|-(?!-))+))?/;
// Dynamo's tracing field on router diagnostics: `model="Qwen/Qwen3-0.6B"`.
const MODEL_FIELD = /\bmodel="([^"\s]+)"/;

// A hub id in the errors of a model that could not be loaded (transformers utils/hub.py, huggingface_hub errors.py):
// "ORG/NAME is not a local folder ...", "Access to model ORG/NAME is restricted", "Repo model ORG/NAME is gated",
// "https://huggingface.co/ORG/NAME/resolve/...". A path (leading / . ~) is no hub id.
const HUB_ID = String.raw`([\w][\w.-]*/[\w][\w.-]*)`;
const NAMED_ID = [
  new RegExp(String.raw`(?:^|[\s'"(])${HUB_ID} is not a local folder`),
  new RegExp(String.raw`\bAccess to model ${HUB_ID} is restricted`),
  new RegExp(String.raw`\bRepo model ${HUB_ID} is gated`),
  new RegExp(String.raw`huggingface\.co/${HUB_ID}/resolve/`),
];

/** The model a log line names (a cache folder of a lock or download, Dynamo's model field, a hub id in an error); null when none. */
export function modelNamedIn(text: string): string | null {
  const field = MODEL_FIELD.exec(text);
  if (field) return field[1];
  for (const re of NAMED_ID) {
    const m = re.exec(text);
    if (m) return m[1].replace(/\.$/, '');
  }
  const cache = CACHE_FOLDER.exec(text);
  if (!cache) return null;
  return cache[2] ? `${cache[1]}/${cache[2]}` : cache[1];
}
