// Runs the npm package node-nvidia-smi (which executes `nvidia-smi -q -x` from PATH and
// converts the XML with xml2js) and prints its result as JSON on stdout.
'use strict';
const smi = require('node-nvidia-smi');

smi((err, data) => {
  if (err) {
    process.stderr.write(String(err && err.message ? err.message : err) + '\n');
    process.exit(1);
  }
  process.stdout.write(JSON.stringify(data) + '\n');
});
