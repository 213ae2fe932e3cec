import { Document, isScalar, parse, visit } from 'yaml';
import type { ExportModel } from './components.js';
import type { Rendered } from './render.js';

/** What a reader of the file needs before `kubectl apply`. */
export function headerLines(model: ExportModel, rendered: Rendered): string[] {
  const secret = model.components.find((c) => c.hfSecret)?.hfSecret;
  const lines = [
    `DynamoGraphDeployment (nvidia.com/${rendered.api}) from dynamo-dev recipe "${model.recipe}", model ${model.model}.`,
    "For Dynamo's Kubernetes operator: kubectl apply -f FILE -n NAMESPACE (docs/export.md).",
  ];
  if (secret) lines.push(`Pods read HF_TOKEN from Secret "${secret}": kubectl create secret generic ${secret} --from-literal=HF_TOKEN=...`);
  return lines;
}

/**
 * Kubernetes reads manifests with YAML 1.1 rules (sigs.k8s.io/yaml over go-yaml), where `on`,
 * `off`, `yes`, `y`, `1_000`, `12:30:00` are booleans and numbers, while this library writes YAML
 * 1.2 and leaves them plain: an env value "on" became true, or the file did not load. A string
 * either reading would not give back as the same string is quoted; so are `=` (1.1's value key)
 * and `<<` (its merge key), which go-yaml treats specially.
 */
export function readsAsOtherThan(text: string): boolean {
  if (text === '=' || text === '<<') return true;
  for (const version of ['1.1', '1.2'] as const) {
    try {
      if (parse(text, { version }) !== text) return true;
    } catch {
      return true;
    }
  }
  return false;
}

/** One YAML document; long strings (JSON flag values) stay on one line. */
export function toYaml(rendered: Rendered, header: string[]): string {
  const doc = new Document(rendered.doc);
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && !node.type?.startsWith('QUOTE') && readsAsOtherThan(node.value)) node.type = 'QUOTE_DOUBLE';
    },
  });
  doc.commentBefore = header.map((l) => ` ${l}`).join('\n');
  for (const c of rendered.comments) {
    const node = doc.getIn(c.path, true);
    if (isScalar(node)) node.comment = c.text;
  }
  return doc.toString({ lineWidth: 0 });
}
