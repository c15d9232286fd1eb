/**
 * Realistic pods for benchmarks: about 3 KB of JSON each, managedFields
 * included, shaped like what a Deployment's pods look like on a real
 * cluster (labels, owner reference, one container with env, probes,
 * resources and mounts, status with conditions).
 */
export function pod(i: number, resourceVersion: number): Record<string, unknown> {
  const name = `web-7d4b9c8f6-${i.toString(36).padStart(5, '0')}`;
  const namespace = `team-${i % 20}`;
  const ts = '2026-11-29T08:00:00Z';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      uid: `5f0c2f9e-${(i % 65536).toString(16).padStart(4, '0')}-4b8e-9d3a-${i.toString(16).padStart(12, '0')}`,
      resourceVersion: String(resourceVersion),
      generateName: 'web-7d4b9c8f6-',
      creationTimestamp: ts,
      labels: { app: 'web', 'pod-template-hash': '7d4b9c8f6', tier: 'frontend', 'app.kubernetes.io/version': '1.4.2' },
      annotations: { 'kubectl.kubernetes.io/restartedAt': ts, 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9090' },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d4b9c8f6', uid: '0d6f4c1e-8a52-4a43-b0f6-3c1f2b7e9a10', controller: true, blockOwnerDeletion: true },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: ts,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:generateName': {}, 'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {}, 'f:tier': {} }, 'f:ownerReferences': { '.': {}, 'k:{"uid":"0d6f4c1e-8a52-4a43-b0f6-3c1f2b7e9a10"}': {} } },
            'f:spec': {
              'f:containers': {
                'k:{"name":"web"}': {
                  '.': {}, 'f:env': { '.': {}, 'k:{"name":"LOG_LEVEL"}': { '.': {}, 'f:name': {}, 'f:value': {} } }, 'f:image': {}, 'f:imagePullPolicy': {}, 'f:name': {},
                  'f:ports': { '.': {}, 'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} } },
                  'f:readinessProbe': { '.': {}, 'f:httpGet': { '.': {}, 'f:path': {}, 'f:port': {} } }, 'f:resources': { '.': {}, 'f:limits': {}, 'f:requests': {} },
                },
              },
              'f:dnsPolicy': {}, 'f:restartPolicy': {}, 'f:schedulerName': {}, 'f:terminationGracePeriodSeconds': {},
            },
          },
        },
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion: 'v1',
          time: ts,
          fieldsType: 'FieldsV1',
          subresource: 'status',
          fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} } }, 'f:containerStatuses': {}, 'f:hostIP': {}, 'f:phase': {}, 'f:podIP': {}, 'f:startTime': {} } },
        },
      ],
    },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'registry.example.com/team/web:1.4.2',
          imagePullPolicy: 'IfNotPresent',
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          env: [{ name: 'LOG_LEVEL', value: 'info' }, { name: 'REPLICA', value: String(i) }],
          resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
          readinessProbe: { httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' }, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
          volumeMounts: [{ name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
      volumes: [{ name: 'kube-api-access', projected: { defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }] } }],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      nodeName: `node-${i % 50}`,
      schedulerName: 'default-scheduler',
      priority: 0,
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Initialized', status: 'True', lastTransitionTime: ts },
        { type: 'Ready', status: 'True', lastTransitionTime: ts },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: ts },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: ts },
      ],
      hostIP: `10.0.${i % 50}.1`,
      podIP: `10.244.${(i >> 8) % 256}.${i % 256}`,
      startTime: ts,
      containerStatuses: [
        { name: 'web', ready: true, restartCount: resourceVersion % 3, image: 'registry.example.com/team/web:1.4.2', imageID: 'registry.example.com/team/web@sha256:4b9c8f6d7e2a1b3c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4', containerID: `containerd://${i.toString(16).padStart(64, 'a')}`, started: true, state: { running: { startedAt: ts } } },
      ],
      qosClass: 'Burstable',
    },
  };
}
