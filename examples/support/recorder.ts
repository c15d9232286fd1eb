import type { KubeConfig } from '@kubernetes/client-node';
import { eventRecorder, kubeClient, silentLogger, type EventRecorder, type Logger } from 'rxkube';

/**
 * An Event recorder for a controller of an example, to pass as its
 * `recorder` and to `close()` once the controller is done and before the
 * embedded API server goes: `controller()` only flushes the recorder it
 * makes itself, without waiting, so Events still being retried would keep
 * the process alive for minutes after `done`.
 */
export function exampleRecorder(kubeConfig: KubeConfig, controller: string, instance: string, logger: Logger = silentLogger): EventRecorder {
  return eventRecorder({
    client: kubeClient(kubeConfig, { fieldManager: controller, logger }),
    reportingController: controller,
    reportingInstance: instance,
    logger,
  });
}
