import { TestScheduler } from 'rxjs/testing';
import { expect } from 'chai';
import type { KubeObject } from 'rxkube';

export interface TestObjectOptions {
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  generation?: number;
}

/** A minimal namespaced object: enough metadata for keys, versions and uids. */
export function obj(name: string, resourceVersion: string, options: TestObjectOptions = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: options.namespace ?? 'default',
      uid: options.uid ?? `uid-${name}`,
      resourceVersion,
      ...(options.labels ? { labels: options.labels } : {}),
      ...(options.generation !== undefined ? { generation: options.generation } : {}),
    },
  };
}

/** A TestScheduler whose assertions compare deeply with chai. */
export function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });
}
