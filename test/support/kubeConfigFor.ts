import { KubeConfig } from '@kubernetes/client-node';

/** A KubeConfig for a plain-HTTP API server at `url` (the embedded one, from a child process). */
export function kubeConfigFor(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'embedded', server: url, skipTLSVerify: true }],
    users: [{ name: 'test' }],
    contexts: [{ name: 'embedded', cluster: 'embedded', user: 'test' }],
    currentContext: 'embedded',
  });
  return kc;
}
