import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from 'rxkube';
import { tutorialProject, wantTutorialProject, type UserProject } from './userProject.js';

/**
 * docs/tutorial.md as a newcomer follows it: a new project made by its
 * install commands with the packed tarball as rxkube, the README's
 * tsconfig.json (strict, library types checked), its files, then each of
 * its commands as the page gives it. test/tutorial.test.ts runs the same
 * files against this checkout's sources; this one runs them against what
 * npm installs.
 */

// Made in the background once the README's project is, if another test makes that one first.
wantTutorialProject();

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] };

/** The tutorial's sh block that holds `command`, as one line: its comment dropped, and a pipe into kubectl (there is no cluster here). */
function commandOf(project: UserProject, command: string): string {
  const lines = project.blocks.filter((b) => b.language === 'sh').flatMap((b) => b.code.split('\n'));
  const line = lines.find((l) => l.startsWith(command));
  if (line === undefined) throw new Error(`docs/tutorial.md has no command that starts with \`${command}\``);
  return line.replace(/\s+#.*$/, '').replace(/\s*\|\s*kubectl apply -f -$/, '');
}

describe('docs/tutorial.md in a new project, from the packed tarball', function () {
  this.timeout(600_000);
  let project: UserProject;
  before(async () => {
    project = await tutorialProject();
  });

  it('compiles under the README\'s strict tsconfig (library types checked), converges with npm start and passes its tests with npm test', async () => {
    const tsconfig = JSON.parse(await readFile(join(project.dir, 'tsconfig.json'), 'utf8')) as { compilerOptions: { strict: boolean; skipLibCheck: boolean } };
    expect(tsconfig.compilerOptions).to.include({ strict: true, skipLibCheck: false });
    const started = await project.sh(commandOf(project, 'npm run build && npm start'), 120_000);
    expect(started).to.contain('0 of 2 replicas available');
    expect(started).to.contain('converged: default/shop is Ready, 2 of 2 replicas available');
    // The page's next command builds again first: the same sources, just built, so its tests run on that build (tsc takes 20 s here).
    const test = commandOf(project, 'npm run build && npm test');
    expect(test.startsWith('npm run build && ')).to.equal(true);
    const tested = await project.sh(test.slice('npm run build && '.length), 120_000);
    expect(tested).to.match(/^# pass 4$/m);
    expect(tested).to.match(/^# fail 0$/m);
  });

  it('prints its manifests with npx rxkube manifests src/controller.ts: the CRD, and a Role for exactly its wiring', async () => {
    const printed = await project.run(commandOf(project, 'npx rxkube manifests'));
    expect(printed.code, printed.stderr).to.equal(0);
    const objects = parseAllDocuments(printed.stdout).map((d) => d.toJS() as KubeObject & { rules?: Rule[]; spec?: { template?: { spec?: { containers?: { image: string }[] } } } });
    expect(objects.map((o) => `${o.kind} ${o.metadata.name}`)).to.include.members(['CustomResourceDefinition webapps.apps.example.com', 'ServiceAccount webapp', 'Role webapp', 'Deployment webapp']);
    for (const o of objects.filter((o) => o.kind !== 'CustomResourceDefinition' && o.kind !== 'ClusterRole' && o.kind !== 'ClusterRoleBinding')) {
      expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).to.equal('webapps');
    }
    const role = objects.find((o) => o.kind === 'Role');
    const grants = (role?.rules ?? []).flatMap((r) => r.resources.flatMap((res) => r.verbs.map((v) => `${r.apiGroups.join(',')}/${res} ${v}${r.resourceNames ? ` ${r.resourceNames.join(',')}` : ''}`)));
    // What the controller watches (list, watch), what `permissions` declares, and its Events: nothing else.
    expect(grants).to.include.members([
      'apps.example.com/webapps list',
      'apps.example.com/webapps watch',
      'apps.example.com/webapps patch',
      'apps.example.com/webapps/status patch',
      'apps/deployments watch',
      'apps/deployments patch',
      '/services patch',
      '/configmaps create',
      '/configmaps get webapp-directory',
      '/configmaps update webapp-directory',
    ]);
    expect(grants.filter((g) => / (delete|deletecollection|\*)/.test(g))).to.deep.equal([]);
    const deployment = objects.find((o) => o.kind === 'Deployment');
    expect(deployment?.spec?.template?.spec?.containers?.[0]?.image).to.equal('registry.example.com/webapp:1');
  });
});
