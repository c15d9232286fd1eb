import { expect } from 'chai';
import type { ControllerContext, KubeObject } from 'rxkube';

/**
 * `loadDefinition` on a `.ts` module: the module shares the runner's rxkube,
 * so errors of the runner's client are errors the module knows. The runner's
 * pieces are imported here with `import()`, as ES modules, as the `rxkube`
 * command loads them: mocha requires test files, which gives their static
 * imports copies of src/ of their own.
 */
describe('loadDefinition: a TypeScript definition shares the runner\'s rxkube', () => {
  it('the definition\'s isNotFound knows a NotFound from the runner\'s client (one KubeApiError class, not a second copy)', async () => {
    const { isNotFound } = await import('rxkube');
    const { memoryClient } = await import('rxkube/testing');
    const { define, loadDefinition, placeholderKubeConfig } = await import('../../src/deploy/definition.js');
    const client = memoryClient();
    const missing = await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'absent' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isNotFound(missing), 'the runner sees a NotFound').to.equal(true);
    const defined = define(await loadDefinition('test/fixtures/notFoundDefinition.ts'), placeholderKubeConfig(), 'default');
    const ctx = { client } as unknown as ControllerContext<KubeObject>;
    expect('reconcile' in defined && (await defined.reconcile('default/absent', ctx))).to.equal('gone');
  });
});
