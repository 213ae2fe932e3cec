// The DynamoGraphDeployment API versions export writes (render.ts) and checks (schema.ts).

export type ApiVersion = 'v1beta1' | 'v1alpha1';
export const API_VERSIONS: readonly ApiVersion[] = ['v1beta1', 'v1alpha1'];
export const DEFAULT_API: ApiVersion = 'v1beta1';
