#!/usr/bin/env node
// Launcher only: all logic lives in the compiled CLI.
import('../dist/cli.js').then((m) => m.main(process.argv)).catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/cli.js')) {
    console.error('dynamo-dev: not built yet; run `npm ci` (or `npm run build`) in the package folder');
    process.exit(1);
  }
  console.error(`dynamo-dev: ${err && err.message ? err.message : err}`);
  process.exit(1);
});
