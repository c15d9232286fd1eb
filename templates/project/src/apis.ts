import type { Api } from './api.js';
import { widgetApi } from './widget/controller.js';
// rxkube:scaffold:imports (`npx rxkube create api <Kind>` adds its import above this line)

/** Every API of this project, in the order src/main.ts runs them. */
export const apis: readonly Api[] = [
  widgetApi,
  // rxkube:scaffold:apis (`npx rxkube create api <Kind>` adds its API above this line)
];
