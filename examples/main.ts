/**
 * The main job (`npm start`): the podautoscaler controller against the
 * embedded API server, or against the cluster given with `--kubeconfig`
 * (or `KUBECONFIG`), driven by a scripted workload, with live progress,
 * `/metrics`, and a summary saying whether every object converged.
 *
 * Options: --kubeconfig path · --pace ms (pause between steps, default 900)
 * · --step-timeout ms (default 15000) · --metrics-port n (default: any free port).
 */
import { runDemo } from './demo/demo.js';

const converged = await runDemo({ argv: process.argv.slice(2), env: process.env, out: process.stdout });
process.exitCode = converged ? 0 : 1;
