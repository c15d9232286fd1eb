# syntax=docker/dockerfile:1
# The container image of rxkube's example controllers, and the recipe for yours:
#   docker build -t podautoscaler:1 .
#   npx rxkube manifests examples/podautoscaler/controller.ts --image podautoscaler:1 | kubectl apply -f -
# Another controller of the image: pass its module as the argument (the Deployment's `args`),
#   docker run podautoscaler:1 controller/configmap-rollout/controller.js
# Every path below is relative to its WORKDIR (test/package/container.test.ts runs these steps without Docker,
# taking the results of `npm ci` and `npm pack` from its run's shared pack: change those two steps there too).

FROM node:20.20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# rxkube itself: `npm pack` builds dist/ (prepack) and packs what the registry would hold.
RUN mkdir -p .image/app && npm pack --pack-destination .image/app && mv .image/app/rxkube-*.tgz .image/app/rxkube.tgz
# The controllers, compiled against the packed rxkube's types, with the files they read at run time (crd.yaml).
RUN npx tsc -p deploy/tsconfig.controllers.json && (cd examples && find . -name '*.yaml' -exec cp --parents {} ../.image/app/controller/ \;)
# The runtime's package: rxkube, its peer dependencies (rxjs, client-node) and what gitsync imports (isomorphic-git), locked here so that the runtime stage can `npm ci`.
RUN cp deploy/package.json .image/app/ && cd .image/app && npm install --package-lock-only --omit=dev --no-audit --no-fund

FROM node:20.20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/.image/app/package.json /src/.image/app/package-lock.json /src/.image/app/rxkube.tgz ./
RUN npm ci --omit=dev --no-audit --no-fund && rm rxkube.tgz
COPY --from=build /src/.image/app/controller ./controller
# The image's own non-root user (uid 1000); the Deployment adds runAsNonRoot and a read-only root filesystem.
USER node
EXPOSE 8080 9443
# node is PID 1 and that is fine here: `rxkube run` (runController) handles SIGTERM and SIGINT itself,
# so the kernel's PID 1 rule (no default signal actions) changes nothing: a first SIGTERM shuts down
# gracefully (reconciles finish, the Lease is released), a second aborts at once. A controller that spawns
# child processes wants a reaper as PID 1 too: `docker run --init` or tini (ENTRYPOINT ["tini", "--", "node", ...]).
ENTRYPOINT ["node", "node_modules/rxkube/bin/rxkube.js", "run"]
CMD ["controller/podautoscaler/controller.js"]
