import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { stringify } from 'yaml';
import type { ApiServer } from 'rxkube/testing';
import { start } from './apiserver.helpers.js';
import { gadget, gadgetCrd, gadgetSchema } from './crdValidation.fixtures.js';
import { describeKubectl, kubectlPath } from './kubectl.helpers.js';

/**
 * CRD validation as a kubectl user meets it: the 422 of a custom resource
 * that breaks a schema keyword or a CEL rule, printed by kubectl in kube's
 * words; a CRD whose rule does not compile refused; the CRD's printer
 * columns still printed.
 */


interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describeKubectl('kubectl: CRD validation', function () {
  this.timeout(60_000);
  let server: ApiServer;
  let dir: string;

  before(async () => {
    server = await start();
    dir = await mkdtemp(join(tmpdir(), 'rxkube-kubectl-crd-'));
    await server.writeKubeconfig(join(dir, 'kubeconfig'));
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  function kubectl(args: string[], stdin = ''): Promise<Run> {
    return new Promise((resolve) => {
      const child = execFile(
        kubectlPath,
        ['--kubeconfig', join(dir, 'kubeconfig'), '--cache-dir', join(dir, 'cache'), ...args],
        { env: { PATH: process.env.PATH ?? '', HOME: dir }, timeout: 30_000 },
        (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }),
      );
      child.stdin?.end(stdin);
    });
  }

  it('applies the CRD, then refuses a Gadget breaking a keyword and one breaking a rule, in kube\'s words', async () => {
    expect((await kubectl(['apply', '-f', '-'], stringify(gadgetCrd()))).stdout).to.equal('customresourcedefinition.apiextensions.k8s.io/gadgets.example.com created\n');
    const keyword = await kubectl(['apply', '-f', '-'], stringify(gadget('g1', { size: 0 })));
    expect(keyword.code).to.equal(1);
    expect(keyword.stderr).to.contain('The Gadget "g1" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1');
    const rule = await kubectl(['apply', '-f', '-'], stringify(gadget('g1', { replicas: 9, maxReplicas: 5 })));
    expect(rule.code).to.equal(1);
    expect(rule.stderr).to.contain('The Gadget "g1" is invalid: spec: Invalid value: "object": replicas must not exceed maxReplicas');
  });

  it('applies a valid Gadget and prints the CRD\'s columns; a merge patch that shrinks it fails the transition rule', async () => {
    expect((await kubectl(['apply', '-f', '-'], stringify(gadget('g2', { size: 4, mode: 'fast' })))).stdout).to.equal('gadget.example.com/g2 created\n');
    const table = await kubectl(['get', 'gadgets']);
    expect(table.stdout).to.match(/^NAME\s+SIZE\s+MODE\ng2\s+4\s+fast\n$/);
    const patch = await kubectl(['patch', 'gadget', 'g2', '--type', 'merge', '-p', '{"spec":{"size":2}}']);
    expect(patch.code).to.equal(1);
    expect(patch.stderr).to.contain('spec: Invalid value: "object": size may not shrink');
  });

  it('refuses a CRD whose rule does not compile', async () => {
    const schema = gadgetSchema() as { properties: { spec: Record<string, unknown> } };
    schema.properties.spec['x-kubernetes-validations'] = [{ rule: 'self.nope > 1' }];
    const run = await kubectl(['apply', '-f', '-'], stringify(gadgetCrd(schema as Record<string, unknown>, 'others')));
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain('The CustomResourceDefinition "others.example.com" is invalid: spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value:');
    expect(run.stderr).to.contain("compilation failed: ERROR: <input>:1:5: undefined field 'nope'");
  });
});
