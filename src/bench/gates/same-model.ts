import { type Gate, verdict } from './types.js';

// Variants compare only on the same model and tokenizer: AIPerf sizes the prompts with the
// tokenizer, and a different model is a different experiment.

const gate: Gate = {
  id: 'model.same',
  title: 'the same model and tokenizer as the first variant',
  judge(f) {
    const evidence = { model: f.model, tokenizer: f.tokenizer, reference: f.reference };
    if (!f.reference) return verdict('pass', `${f.model} (the first variant: the reference)`, evidence);
    const diff = [
      f.model !== f.reference.model ? `model ${f.model} (${f.reference.variant}: ${f.reference.model})` : null,
      f.tokenizer !== f.reference.tokenizer ? `tokenizer ${f.tokenizer} (${f.reference.variant}: ${f.reference.tokenizer})` : null,
    ].filter((x): x is string => x !== null);
    if (diff.length > 0) return verdict('fail', `differs from the first variant: ${diff.join('; ')}`, evidence);
    return verdict('pass', `${f.model}, as ${f.reference.variant}`, evidence);
  },
};

export default gate;
