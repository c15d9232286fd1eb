/**
 * The podautoscaler's reconcile as `rxkube replay` loads it:
 *
 *   npm start -- --record run.jsonl
 *   npx rxkube replay run.jsonl --reconcile examples/podautoscaler/forReplay.ts
 *   npx rxkube replay run.jsonl --reconcile examples/podautoscaler/forReplay.ts --export offByOne
 *
 * `reconcile` is the real one; `offByOne` is the same with a bug (it asks
 * for one replica more than the autoscaler says), to see what a replay
 * shows of a change. `replayOptions` brings what a recording cannot hold:
 * the stores' index functions and the watches' maps.
 */
import { KubeConfig } from '@kubernetes/client-node';
import type { ControllerReconciler } from 'rxkube';
import { podAutoscalerOptions } from './controller.js';
import { reconcilePodAutoscaler } from './reconcile.js';
import type { PodAutoscaler } from './types.js';

/** The podautoscaler's reconcile, as it ran. */
export const reconcile: ControllerReconciler<PodAutoscaler> = reconcilePodAutoscaler;

/** The bug: the replicas asked for, plus one. */
export const offByOne: ControllerReconciler<PodAutoscaler> = (key, ctx) => {
  const pa = ctx.object;
  const wrong = pa === undefined ? undefined : { ...pa, spec: { ...pa.spec, replicas: pa.spec.replicas + 1 } };
  return reconcilePodAutoscaler(key, { ...ctx, signal: ctx.signal, object: wrong });
};

const { for: primary, owns, watches } = podAutoscalerOptions(new KubeConfig());

/** The options of `replay()` that are code: the stores' index functions, the watches' maps. */
export const replayOptions = { for: primary, ...(owns !== undefined ? { owns } : {}), ...(watches !== undefined ? { watches } : {}) };
