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

  it('serves escaped property names, combinators, the format library and optional syntax as kube does, refusing in kube\'s words', async () => {
    // A Gateway-like address (oneOf of anyOf, as Gateway API v1.6.1's Gateway CRD has it) and a parent reference read through __namespace__.
    const spec = {
      type: 'object',
      properties: {
        address: {
          type: 'object',
          oneOf: [{ properties: { type: { enum: ['IPAddress'] }, value: { anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }] } } }, { properties: { type: { not: { enum: ['IPAddress'] } } } }],
          properties: { type: { type: 'string', default: 'IPAddress' }, value: { type: 'string', maxLength: 253 } },
        },
        parent: { type: 'object', properties: { name: { type: 'string', maxLength: 63 }, namespace: { type: 'string', maxLength: 63 } } },
        port: { type: 'object', properties: { 'port-name': { type: 'string', maxLength: 63 } } },
      },
      'x-kubernetes-validations': [
        { rule: "self.?parent.?__namespace__.orValue('') != 'kube-system'", message: 'parents may not live in kube-system' },
        // Not validate(self.?port.?port__dash__name.orValue('ok')): kube knows no bound for orValue's string, and estimates the rule over its budget.
        {
          rule: "!has(self.port) || !has(self.port.port__dash__name) || !format.dns1123Label().validate(self.port.port__dash__name).hasValue()",
          messageExpression: "'port-name: ' + format.dns1123Label().validate(self.port.port__dash__name).value()[0]",
        },
      ],
    };
    const schema = { type: 'object', properties: { spec } };
    expect((await kubectl(['apply', '-f', '-'], stringify(gadgetCrd(schema, 'others')))).stdout).to.equal('customresourcedefinition.apiextensions.k8s.io/others.example.com created\n');
    const other = (name: string, body: Record<string, unknown>): string => stringify({ apiVersion: 'example.com/v1', kind: 'Other', metadata: { name, namespace: 'default' }, spec: body });
    expect((await kubectl(['apply', '-f', '-'], other('o1', { address: { value: '10.0.0.1' }, parent: { name: 'gw', namespace: 'infra' }, port: { 'port-name': 'http' } }))).stdout).to.equal('other.example.com/o1 created\n');
    const address = await kubectl(['apply', '-f', '-'], other('o2', { address: { type: 'IPAddress', value: '1.2.3.4:8080' } }));
    expect(address.code).to.equal(1);
    expect(address.stderr).to.contain('spec.address.value: Invalid value: "1.2.3.4:8080": spec.address.value in body must be of type ipv4: "1.2.3.4:8080"');
    expect(address.stderr).to.contain('<nil>: Invalid value: "": "spec.address" must validate one and only one schema (oneOf). Found none valid');
    const rules = await kubectl(['apply', '-f', '-'], other('o3', { parent: { name: 'gw', namespace: 'kube-system' }, port: { 'port-name': 'HTTP' } }));
    expect(rules.code).to.equal(1);
    expect(rules.stderr).to.contain('spec: Invalid value: "object": parents may not live in kube-system');
    expect(rules.stderr).to.contain("spec: Invalid value: \"object\": port-name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'");
  });

  it('refuses a CRD with a type inside anyOf, as kube words it', async () => {
    const schema = { type: 'object', properties: { spec: { type: 'object', properties: { n: { type: 'integer' } }, anyOf: [{ type: 'object', required: ['n'] }] } } };
    const run = await kubectl(['apply', '-f', '-'], stringify(gadgetCrd(schema, 'thirds')));
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain('The CustomResourceDefinition "thirds.example.com" is invalid: spec.validation.openAPIV3Schema.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural');
  });
});
