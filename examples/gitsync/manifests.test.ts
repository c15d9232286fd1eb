import { expect } from 'chai';
import { isManifestFile, parseManifestFile } from './manifests.js';
import { healthOf, worstHealth } from './health.js';

describe('examples/gitsync manifests', () => {
  it('reads every document of a YAML file, skipping empty ones, and the items of a List', () => {
    const text = '---\napiVersion: v1\nkind: ConfigMap\nmetadata: { name: a }\n---\n---\napiVersion: v1\nkind: List\nitems:\n  - { apiVersion: v1, kind: ConfigMap, metadata: { name: b } }\n  - { apiVersion: v1, kind: Secret, metadata: { name: c } }\n';
    const parsed = parseManifestFile('deploy/all.yaml', text);
    expect(parsed.errors).to.deep.equal([]);
    expect(parsed.manifests.map((m) => `${m.file}:${m.object.kind}/${m.object.metadata.name}`)).to.deep.equal(['deploy/all.yaml:ConfigMap/a', 'deploy/all.yaml:ConfigMap/b', 'deploy/all.yaml:Secret/c']);
  });

  it('reads a JSON file holding one object or an array of them', () => {
    expect(parseManifestFile('a.json', '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}').manifests).to.have.length(1);
    expect(parseManifestFile('b.json', '[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}},{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}]').manifests).to.have.length(2);
  });

  it('reports each broken document with what is wrong, and keeps the good ones of the same file', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: good }\n---\nkind: ConfigMap\nmetadata: { name: x }\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n---\n- just\n- a list\n---\nkey: [unclosed\n';
    const parsed = parseManifestFile('f.yaml', text);
    expect(parsed.manifests.map((m) => m.object.metadata.name)).to.deep.equal(['good']);
    expect(parsed.errors.map((e) => e.message.replace(/not YAML: .*/, 'not YAML'))).to.deep.equal([
      'document 5: not YAML',
      'document 2: no apiVersion',
      'document 3: ConfigMap without metadata.name',
      'document 4: not an object ("just")',
      'document 4: not an object ("a list")',
    ]);
    expect(parsed.errors.every((e) => e.file === 'f.yaml')).to.equal(true);
    expect(parseManifestFile('bad.json', '{"apiVersion":').errors[0]?.message).to.match(/^not JSON: /);
  });

  it('takes *.yaml, *.yml and *.json files only', () => {
    expect(['a.yaml', 'b.YML', 'c.json', 'README.md', 'kustomization.yaml.orig', 'x.yamlx'].filter(isManifestFile)).to.deep.equal(['a.yaml', 'b.YML', 'c.json']);
  });
});

describe('examples/gitsync health', () => {
  const deployment = (status: object, replicas = 2, generation = 2) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', generation }, spec: { replicas }, status });

  it('calls a Deployment Healthy only once its controller saw its generation and every replica is updated and available', () => {
    expect(healthOf(deployment({}))).to.equal('Progressing');
    expect(healthOf(deployment({ observedGeneration: 1, updatedReplicas: 2, availableReplicas: 2 }))).to.equal('Progressing');
    expect(healthOf(deployment({ observedGeneration: 2, updatedReplicas: 2, availableReplicas: 1 }))).to.equal('Progressing');
    expect(healthOf(deployment({ observedGeneration: 2, updatedReplicas: 2, availableReplicas: 2 }))).to.equal('Healthy');
    expect(healthOf(deployment({ observedGeneration: 2, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] }))).to.equal('Degraded');
    expect(healthOf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } })).to.equal('Healthy');
  });

  it('sums up healths as the worst of them', () => {
    expect(worstHealth([])).to.equal('Healthy');
    expect(worstHealth(['Healthy', 'Progressing', 'Healthy'])).to.equal('Progressing');
    expect(worstHealth(['Progressing', 'Degraded', 'Missing'])).to.equal('Degraded');
  });
});
