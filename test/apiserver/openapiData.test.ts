import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { dataDocument, dataFile } from '../../scripts/kubernetesOpenApi.js';
import { kubernetesSchemas } from '../../src/apiserver/api/kubernetesSchemas.js';
import { builtinResources } from '../../src/apiserver/api/builtinResources.js';

/**
 * data/kubernetes-openapi.json.gz is what scripts/kubernetesOpenApi.ts makes from the installed
 * @kubernetes/client-node: when either changes without the other, this fails (rerun the script).
 */
describe('the built-in kinds\' OpenAPI schemas (data/kubernetes-openapi.json.gz)', function () {
  this.timeout(30_000);

  it('is what the script makes from the installed client-node', () => {
    const committed = JSON.parse(gunzipSync(readFileSync(dataFile)).toString('utf8')) as unknown;
    expect(committed).to.deep.equal(dataDocument());
  });

  it('has a schema for every served built-in kind and its list, named as the spec names them', () => {
    const { byKind, origin } = kubernetesSchemas();
    expect(origin.kubernetes).to.equal('v1.34.0');
    for (const type of builtinResources()) {
      expect(byKind.get(`${type.group}/${type.version}/${type.kind}`), type.kind).to.be.a('string');
      expect(byKind.get(`${type.group}/${type.version}/${type.listKind}`), type.listKind).to.be.a('string');
    }
    expect(byKind.get('apps/v1/Deployment')).to.equal('io.k8s.api.apps.v1.Deployment');
    expect(byKind.get('/v1/Event')).to.equal('io.k8s.api.core.v1.Event');
    expect(byKind.get('events.k8s.io/v1/Event')).to.equal('io.k8s.api.events.v1.Event');
    expect(byKind.get('apiextensions.k8s.io/v1/CustomResourceDefinition')).to.equal('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition');
  });
});

describe('reading the schemas', function () {
  this.timeout(60_000);

  it('waits for the first write of a built-in: starting a server and reading from it never reads them', async () => {
    const { execFile } = await import('node:child_process');
    const child = fileURLToPath(new URL('../fixtures/schemasLoadChild.ts', import.meta.url));
    const out = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--import', 'tsx', child], { timeout: 50_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
    });
    expect(JSON.parse(out)).to.deep.equal({ afterStart: false, afterWrite: true });
  });
});
