import { Document, isScalar } from 'yaml';
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

/** One YAML document; long strings (JSON flag values) stay on one line. */
export function toYaml(rendered: Rendered, header: string[]): string {
  const doc = new Document(rendered.doc);
  doc.commentBefore = header.map((l) => ` ${l}`).join('\n');
  for (const c of rendered.comments) {
    const node = doc.getIn(c.path, true);
    if (isScalar(node)) node.comment = c.text;
  }
  return doc.toString({ lineWidth: 0 });
}
