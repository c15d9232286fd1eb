import { startApiServer } from './src/testing/index.js';
import { silentLogger } from './src/logger.js';
const server = await startApiServer({ logger: silentLogger });
async function call(method: string, path: string, body?: string, ct = 'application/json') {
  const res = await fetch(server.url + path, { method, body, headers: body ? { 'content-type': ct } : {} });
  return { status: res.status, text: (await res.text()).slice(0, 250) };
}
const deepArr = '['.repeat(100000) + ']'.repeat(100000);
const deepObj = '{"a":'.repeat(100000) + '1' + '}'.repeat(100000);
const which = process.argv[2];
try {
  await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' }, spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] } }));
  const cm = '/api/v1/namespaces/default/configmaps';
  const w = '/apis/example.com/v1/namespaces/default/widgets';
  await call('POST', cm, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}');
  const cases: Record<string, () => Promise<unknown>> = {
    a: () => call('POST', cm, deepArr),
    b: () => call('POST', cm, deepObj),
    c: () => call('POST', cm, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"extra":${deepArr}}`),
    d: () => call('POST', w, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"x"},"spec":${deepObj}}`),
    e: () => call('POST', w, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"y"},"spec":{"a":${deepArr}}}`),
    f: () => call('POST', cm, deepArr, 'application/yaml'),
    g: () => call('PATCH', cm + '/c', `{"data":${deepObj}}`, 'application/merge-patch+json'),
    h: () => call('PATCH', cm + '/c', deepArr, 'application/json-patch+json'),
    i: () => call('PATCH', cm + '/c', `[{"op":"add","path":"/x","value":${deepArr}}]`, 'application/json-patch+json'),
    j: () => call('PATCH', cm + '/c', `{"data":${deepObj}}`, 'application/strategic-merge-patch+json'),
    k: () => call('PATCH', cm + '/c?fieldManager=m', `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":${deepObj}}`, 'application/apply-patch+yaml'),
  };
  for (const k of which === "all" ? Object.keys(cases) : [which]) console.log(k, JSON.stringify(await cases[k]!()).slice(0, 120));
  console.log('alive', (await call('GET', cm)).status);
} finally { await server.close(); }
