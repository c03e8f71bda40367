#!/bin/sh
# The build stage of ./Dockerfile, one step per argument. The steps live in this script rather than
# inline in the Dockerfile so that test/container.test.ts can run exactly what the image build runs
# (it reads the Dockerfile's RUN lines), on machines where no image can be built.
#
#   build.sh deps   install the locked dependencies, dev ones included (next build needs TypeScript
#                   and Tailwind); npm ci's postinstall generates the Prisma client
#   build.sh app    build the app, then drop what serving does not use, since the runtime stage
#                   copies this folder as it is
set -eu

case "${1:-}" in
deps)
  # --prefer-offline: with the Dockerfile's cache mount (or a warm cache in tests) nothing is
  # downloaded twice; the lockfile still decides every version.
  npm ci --prefer-offline --no-audit --no-fund
  ;;
app)
  npm run build
  # `npm run serve` needs only the production dependencies: tsx, next, prisma (migrations at start)
  # are all regular dependencies. The Prisma client is generated into lib/db/generated, so pruning
  # node_modules keeps it.
  npm prune --omit=dev --no-audit --no-fund
  # Next's compiler cache speeds up the next build only; the server never reads it.
  rm -rf .next/builds/*/cache
  ;;
*)
  echo "usage: $0 deps|app" >&2
  exit 2
  ;;
esac
